//! The sequences drawn: their operations, sizes and methods.

use super::*;

#[test]
fn sequences_are_reproducible_and_varied() {
    let a = SequenceGenerator::new(42, MethodFamily::Cuda, 100_000).sequence(40);
    let b = SequenceGenerator::new(42, MethodFamily::Cuda, 100_000).sequence(40);
    let c = SequenceGenerator::new(43, MethodFamily::Cuda, 100_000).sequence(40);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(matches!(a[0], Operation::Upload { .. }));
    let uniform = a.iter().filter(|op| !is_problem_operation(op)).count();
    assert_eq!(uniform, 40);
}

fn is_problem_operation(op: &Operation) -> bool {
    matches!(
        op,
        Operation::SetProblem { .. }
            | Operation::EditMap { .. }
            | Operation::SwitchHeater { .. }
            | Operation::Solve(_)
            | Operation::ClearProblem
    )
}

#[test]
fn problem_operations_appear_and_follow_a_held_problem() {
    let mut kinds = std::collections::HashSet::new();
    for seed in 0..50 {
        let mut held = false;
        for op in SequenceGenerator::new(seed, MethodFamily::Cuda, 100_000).sequence(40) {
            match op {
                Operation::Upload { .. } => held = false,
                Operation::SetProblem { .. } => held = true,
                Operation::EditMap { .. }
                | Operation::SwitchHeater { .. }
                | Operation::Solve(_) => assert!(held),
                Operation::ClearProblem => {
                    assert!(held);
                    held = false;
                }
                _ => {}
            }
            if is_problem_operation(&op) {
                kinds.insert(std::mem::discriminant(&op));
            }
        }
    }
    assert_eq!(kinds.len(), 5, "every heat-problem operation is drawn");
}

#[test]
fn sizes_respect_the_budget_and_kernels_fit_them() {
    let mut generator = SequenceGenerator::new(7, MethodFamily::Cuda, 5_000);
    for _ in 0..200 {
        for op in generator.sequence(30) {
            if let Operation::Upload { size, .. } = op {
                assert!(size.cells() <= 5_000 && size.rows >= 1 && size.cols >= 1);
            }
        }
    }
}
