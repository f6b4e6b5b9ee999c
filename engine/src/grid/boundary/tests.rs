use super::*;

#[test]
fn every_boundary_has_one_name_for_users_files_and_kernels() {
    for boundary in Boundary::ALL {
        assert_eq!(boundary.to_string(), boundary.name());
        assert_eq!(
            serde_json::to_string(&boundary).unwrap(),
            format!("\"{}\"", boundary.name())
        );
        assert_eq!(boundary.name().parse::<Boundary>().unwrap(), boundary);
        assert_eq!(Boundary::ALL[boundary.kernel_index()], boundary);
    }
}
