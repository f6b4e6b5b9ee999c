//! Tests of `state/mod.rs`.
use super::*;
use crate::compute::CpuBackend;

fn grid(rows: usize, cols: usize, salt: f32) -> Grid {
    let size = GridSize::new(rows, cols).unwrap();
    Grid::from_vec(
        size,
        (0..size.cells())
            .map(|i| ((i * 37 % 101) as f32 * 0.013 + salt).sin())
            .collect(),
    )
    .unwrap()
}

fn state() -> SavedState {
    SavedState {
        current: grid(7, 5, 0.5),
        initial: grid(7, 5, 0.0),
        step: 1234,
        params: StepParams {
            coeff: 0.2123,
            boundary: Boundary::Periodic,
        },
        origin: FieldOrigin::Jagged(JaggedParams::default()),
        problem: None,
    }
}

fn saved_bytes(state: &SavedState) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.heatlab");
    state.save(&path).unwrap();
    std::fs::read(path).unwrap()
}

fn read(bytes: &[u8]) -> Result<SavedState> {
    SavedState::read(bytes, bytes.len() as u64, Path::new("s.heatlab"))
}

fn reason(bytes: &[u8]) -> StateFileError {
    match read(bytes) {
        Err(HeatlabError::StateFile { reason, .. }) => reason,
        other => panic!("expected a state-file error, got {other:?}"),
    }
}

#[test]
fn a_heat_problem_travels_in_version_2_and_a_plain_state_stays_version_1() {
    let plain = saved_bytes(&state());
    assert_eq!(plain[8..12], 1u32.to_le_bytes());
    let mut with_problem = state();
    let size = with_problem.current.size();
    let mut problem = crate::problem::HeatProblem::uniform(
        size,
        0.01,
        crate::problem::material::find("copper").unwrap(),
    );
    let glass = crate::problem::CellKind::of(crate::problem::material::find("glass").unwrap());
    let glass = problem.kind_index(glass).unwrap();
    problem.paint(glass, |row, col| row == col);
    problem.sides.left = crate::problem::SideCondition::Fixed { temperature: 40.0 };
    // A heater under a thermostat travels too.
    problem.kinds[usize::from(glass)].heater = Some(crate::problem::Heater {
        power: crate::problem::HeaterPower::Total(5.0),
        on: false,
    });
    problem.thermostats.push(crate::problem::Thermostat {
        heater_kind: glass,
        probe: (3, 2),
        setpoint: 30.0,
        deadband: 0.5,
        every_steps: 4,
    });
    with_problem.problem = Some(Box::new(SavedProblem {
        problem,
        simulated_seconds: 12.5,
    }));
    let bytes = saved_bytes(&with_problem);
    assert_eq!(bytes[8..12], 2u32.to_le_bytes());
    assert_eq!(read(&bytes).unwrap(), with_problem);
    // A flipped map byte is caught by the checksum; a cut map as truncation.
    let mut flipped = bytes.clone();
    let at = bytes.len() - 5;
    flipped[at] ^= 1;
    assert!(matches!(reason(&flipped), StateFileError::ChecksumMismatch));
    assert!(matches!(
        reason(&bytes[..bytes.len() - 3]),
        StateFileError::Truncated { .. }
    ));
}

#[test]
fn round_trips_bit_for_bit() {
    let state = state();
    let bytes = saved_bytes(&state);
    assert_eq!(&bytes[..8], b"\x89HLSTATE");
    assert_eq!(bytes.len(), 16 + header_len(&bytes) + 2 * 7 * 5 * 4 + 4);
    let back = read(&bytes).unwrap();
    assert_eq!(back, state);
    assert_eq!(back.params.coeff.to_bits(), state.params.coeff.to_bits());
}

fn header_len(bytes: &[u8]) -> usize {
    u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize
}

#[test]
fn bad_files_are_refused_with_their_reason() {
    let bytes = saved_bytes(&state());
    assert!(matches!(reason(b""), StateFileError::WrongMagic));
    assert!(matches!(
        reason(b"\x89PNG\r\n\x1a\n...."),
        StateFileError::WrongMagic
    ));
    assert!(matches!(
        reason(&bytes[..10]),
        StateFileError::Truncated { .. }
    ));
    let cut = &bytes[..bytes.len() - 9];
    assert!(matches!(reason(cut), StateFileError::Truncated { .. }));
    let mut longer = bytes.clone();
    longer.extend_from_slice(b"xx");
    assert!(matches!(
        reason(&longer),
        StateFileError::TrailingBytes { extra: 2 }
    ));
    let mut newer = bytes.clone();
    newer[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let newer = reason(&newer);
    assert!(matches!(
        newer,
        StateFileError::NewerVersion { found, .. } if found == FORMAT_VERSION + 1
    ));
    assert!(newer.to_string().contains("newer heatlab"), "{newer}");
    let mut flipped = bytes.clone();
    let last_value = bytes.len() - 6;
    flipped[last_value] ^= 0x10;
    assert!(matches!(reason(&flipped), StateFileError::ChecksumMismatch));
    let mut header = bytes.clone();
    header[16] = b'[';
    assert!(matches!(reason(&header), StateFileError::BadHeader(_)));
}

#[test]
fn a_resumed_simulation_continues_bit_for_bit() {
    let params = StepParams {
        coeff: 0.23,
        boundary: Boundary::Neumann,
    };
    let initial = grid(31, 17, 0.0);
    let backend = || Box::new(CpuBackend::with_threads(2));
    let mut straight = Simulation::new(backend(), initial.clone(), params).unwrap();
    straight.advance(40).unwrap();
    let mut first = Simulation::new(backend(), initial, params).unwrap();
    first.advance(20).unwrap();
    let origin = FieldOrigin::Imported {
        file: "x.npy".into(),
    };
    let bytes = saved_bytes(&SavedState::of(&mut first, origin).unwrap());
    let mut resumed = read(&bytes).unwrap().into_simulation(backend()).unwrap();
    assert_eq!(resumed.step_count(), 20);
    resumed.advance(20).unwrap();
    assert_eq!(resumed.step_count(), 40);
    let (a, b) = (straight.field().unwrap(), resumed.field().unwrap());
    assert!(a
        .as_slice()
        .iter()
        .zip(b.as_slice())
        .all(|(x, y)| x.to_bits() == y.to_bits()));
    resumed.reset().unwrap();
    assert_eq!(resumed.field().unwrap(), *straight.initial().unwrap());
}

#[test]
fn a_field_with_non_finite_values_is_refused_with_its_count() {
    let mut bad = state();
    bad.current.as_mut_slice()[3] = f32::NAN;
    bad.current.as_mut_slice()[4] = f32::INFINITY;
    assert!(matches!(
        reason(&saved_bytes(&bad)),
        StateFileError::NonFinite {
            field: "field",
            cells: 2,
            total: 35
        }
    ));
    let mut bad = state();
    bad.initial.as_mut_slice()[0] = f32::NEG_INFINITY;
    let message = reason(&saved_bytes(&bad)).to_string();
    assert!(
        message.contains("initial field holds 1 non-finite"),
        "{message}"
    );
}
