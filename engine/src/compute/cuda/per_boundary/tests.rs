use super::*;

#[test]
fn a_table_holds_each_boundarys_value_and_stops_at_the_first_error() {
    let table = PerBoundary::try_new(|boundary| Ok(boundary.name())).unwrap();
    for boundary in Boundary::ALL {
        assert_eq!(table[boundary], boundary.name());
        assert_eq!(*table.get(boundary), boundary.name());
    }
    let mut asked = Vec::new();
    let failed = PerBoundary::try_new(|boundary| {
        asked.push(boundary);
        if boundary == Boundary::Neumann {
            Err(HeatlabError::Internal("no neumann".into()))
        } else {
            Ok(())
        }
    });
    assert!(matches!(failed, Err(HeatlabError::Internal(message)) if message == "no neumann"));
    assert_eq!(asked, [Boundary::Dirichlet, Boundary::Neumann]);
    assert_eq!(
        kernel_name(base::JACOBI_STEP, Boundary::Periodic),
        "jacobi_step_periodic"
    );
}
