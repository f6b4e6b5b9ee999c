//! Sweeps the CPU blocking parameters at one size: `cargo run --release --example cpu_blocking_sweep -- 2000`.
use heatlab_engine::compute::{Backend, CpuBackend, CpuMethod, StepParams};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::GridSize;

fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "2000".into())
        .parse()?;
    let params = JaggedParams {
        size: GridSize::square(n)?,
        ..JaggedParams::default()
    };
    let field = generate_jagged(&params, &|_| {})?;
    let mut methods = vec![CpuMethod::Rows];
    for steps_per_pass in [2, 4, 8] {
        for band_rows in [8, 16, 32, 64, 128] {
            methods.push(CpuMethod::Blocked {
                steps_per_pass,
                band_rows,
            });
        }
    }
    for method in methods {
        let mut cpu = CpuBackend::new().with_method(method);
        cpu.upload(&field)?;
        cpu.advance(8, &StepParams::default())?;
        let steps = 48;
        let elapsed = cpu.advance(steps, &StepParams::default())?;
        println!(
            "{method:<24} {:>9.1} us/step",
            elapsed.as_secs_f64() * 1e6 / steps as f64
        );
    }
    Ok(())
}
