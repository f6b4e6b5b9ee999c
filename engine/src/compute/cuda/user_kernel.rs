//! Kernels users write in the Kernel lab: the contract they follow (read from their source),
//! compiling them with NVRTC, where NVRTC's log points, and stepping the simulation with one
//! that the lab validated.
//!
//! The contract is documented in `kernels/user_step.cu` (the template) and in the README:
//! `extern "C" __global__ void user_step(const float* in, float* out, float* lapl, int rows,
//! int cols, float coeff, int boundary)`, a block of `HEATLAB_BLOCK_X` x `HEATLAB_BLOCK_Y`
//! threads, one launch per step, and the boundaries listed in `HEATLAB_BOUNDARIES`.

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig};
use cudarc::nvrtc::Ptx;

use super::launch::{step_loop, StepLaunch};
use super::stepping::{Lookahead, Stepper};
use super::{driver_error, CudaBackend, CudaDevice};
use crate::compute::{Boundary, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::GridSize;

/// The template a user starts from: heatlab's shared-memory kernel written to the contract.
pub const USER_KERNEL_TEMPLATE: &str = include_str!("../../../../kernels/user_step.cu");

/// The name the user's kernel must have.
pub const USER_KERNEL_NAME: &str = "user_step";

/// The file name NVRTC gives the user's source (its log says `user_step.cu(LINE): ...`).
pub const USER_KERNEL_FILE: &str = "user_step.cu";

/// What a user kernel declares about itself through its `HEATLAB_` defines.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UserContract {
    /// Threads per block along columns (`HEATLAB_BLOCK_X`).
    pub block_x: u32,
    /// Threads per block down rows (`HEATLAB_BLOCK_Y`).
    pub block_y: u32,
    /// The boundaries the kernel handles (`HEATLAB_BOUNDARIES`).
    pub boundaries: Vec<Boundary>,
}

/// A mistake in a source's `HEATLAB_` defines: the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractError {
    /// The line of the define, or `None` when a define is missing.
    pub line: Option<usize>,
    /// What is wrong, for the user.
    pub message: String,
}

impl std::fmt::Display for ContractError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl UserContract {
    /// Reads the `HEATLAB_BLOCK_X`, `HEATLAB_BLOCK_Y` and `HEATLAB_BOUNDARIES` defines of
    /// `source` and checks them (blocks of 1 to 1024 threads, at least one known boundary).
    pub fn parse(source: &str) -> std::result::Result<Self, ContractError> {
        let mut block_x = None;
        let mut block_y = None;
        let mut boundaries = None;
        for (index, text) in source.lines().enumerate() {
            let line = index + 1;
            let mut words = text.split_whitespace();
            if words.next() != Some("#define") {
                continue;
            }
            let Some(name) = words.next() else { continue };
            let value: String = words.collect::<Vec<_>>().join(" ");
            let at = |message: String| ContractError {
                line: Some(line),
                message,
            };
            match name {
                "HEATLAB_BLOCK_X" | "HEATLAB_BLOCK_Y" => {
                    let threads: u32 = value
                        .parse()
                        .map_err(|_| at(format!("{name} must be a whole number, not '{value}'")))?;
                    if !(1..=1024).contains(&threads) {
                        return Err(at(format!("{name} must be 1 to 1024, not {threads}")));
                    }
                    let slot = if name == "HEATLAB_BLOCK_X" {
                        &mut block_x
                    } else {
                        &mut block_y
                    };
                    *slot = Some(threads);
                }
                "HEATLAB_BOUNDARIES" => {
                    let Some(list) = value
                        .strip_prefix('"')
                        .and_then(|rest| rest.strip_suffix('"'))
                    else {
                        return Err(at(format!(
                            "HEATLAB_BOUNDARIES must be a quoted list such as \"dirichlet neumann\", not {value}"
                        )));
                    };
                    let mut parsed = Vec::new();
                    for word in list.split([' ', ',']).filter(|w| !w.is_empty()) {
                        let boundary =
                            crate::choice::parse_choice(&Boundary::ALL, word, "boundary")
                                .map_err(|error| at(error.to_string()))?;
                        if !parsed.contains(&boundary) {
                            parsed.push(boundary);
                        }
                    }
                    if parsed.is_empty() {
                        return Err(at("HEATLAB_BOUNDARIES lists no boundary".into()));
                    }
                    boundaries = Some(parsed);
                }
                _ => {}
            }
        }
        let missing = |name: &str| ContractError {
            line: None,
            message: format!("the source does not #define {name} (see the template's header)"),
        };
        let block_x = block_x.ok_or_else(|| missing("HEATLAB_BLOCK_X"))?;
        let block_y = block_y.ok_or_else(|| missing("HEATLAB_BLOCK_Y"))?;
        let boundaries = boundaries.ok_or_else(|| missing("HEATLAB_BOUNDARIES"))?;
        if block_x * block_y > 1024 {
            return Err(ContractError {
                line: None,
                message: format!(
                    "a block of {block_x} x {block_y} = {} threads is more than 1024",
                    block_x * block_y
                ),
            });
        }
        Ok(Self {
            block_x,
            block_y,
            boundaries,
        })
    }

    /// The launch of one step on a `size` field, one thread a cell; refused where the field
    /// is taller than a grid's 65535 blocks of `HEATLAB_BLOCK_Y` rows reach.
    pub fn launch_config(&self, size: GridSize) -> Result<LaunchConfig> {
        const MAX_GRID_Y: usize = 65_535;
        let blocks_down = size.rows.div_ceil(self.block_y as usize);
        if blocks_down > MAX_GRID_Y {
            return Err(HeatlabError::InvalidInput(format!(
                "the kernel's blocks of {} rows (HEATLAB_BLOCK_Y) reach at most {} rows in a \
                 launch, and the field has {}: a larger HEATLAB_BLOCK_Y steps it",
                self.block_y,
                MAX_GRID_Y * self.block_y as usize,
                size.rows
            )));
        }
        Ok(LaunchConfig {
            grid_dim: (
                (size.cols as u32).div_ceil(self.block_x),
                blocks_down as u32,
                1,
            ),
            block_dim: (self.block_x, self.block_y, 1),
            shared_mem_bytes: 0,
        })
    }

    /// Whether the kernel declares it handles `boundary`.
    pub fn handles(&self, boundary: Boundary) -> bool {
        self.boundaries.contains(&boundary)
    }
}

/// One diagnostic of NVRTC's log: `user_step.cu(LINE): error: ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileDiagnostic {
    /// The source line (1-based).
    pub line: usize,
    /// Whether it is an error (else a warning or remark).
    pub is_error: bool,
    /// The text after the line number.
    pub message: String,
}

/// The diagnostics of an NVRTC log that point at lines of [`USER_KERNEL_FILE`].
pub fn compile_diagnostics(log: &str) -> Vec<CompileDiagnostic> {
    let prefix = format!("{USER_KERNEL_FILE}(");
    log.lines()
        .filter_map(|text| {
            let rest = text.trim_start().strip_prefix(&prefix)?;
            let (line, rest) = rest.split_once(')')?;
            let line: usize = line.parse().ok()?;
            let message = rest.trim_start_matches(':').trim().to_string();
            Some(CompileDiagnostic {
                line,
                is_error: message.starts_with("error") || message.starts_with("catastrophic"),
                message,
            })
        })
        .collect()
}

/// Compiles a user kernel for compute capability `arch` with heatlab's options (no fused
/// multiply-add). A rejected source gives [`HeatlabError::KernelCompile`] with NVRTC's log.
pub fn compile_user_kernel(source: &str, arch: (i32, i32)) -> Result<Ptx> {
    super::device::compile_ptx(USER_KERNEL_FILE, source, arch)
}

/// A user kernel loaded into a backend's context.
pub(super) struct LoadedUserKernel {
    /// Keeps the function's module loaded.
    _module: Arc<CudaModule>,
    function: CudaFunction,
    contract: UserContract,
}

impl CudaBackend {
    /// Compiles `source` and loads it into this backend's context as the user kernel. Call it
    /// only with a source the Kernel lab validated in a separate process: a kernel that faults
    /// here breaks this context.
    pub fn load_user_kernel(&mut self, source: &str) -> Result<UserContract> {
        let contract =
            UserContract::parse(source).map_err(|e| HeatlabError::InvalidInput(e.to_string()))?;
        let loaded = load_user_function(&self.device, source)?;
        self.user = Some(LoadedUserKernel {
            _module: loaded.0,
            function: loaded.1,
            contract: contract.clone(),
        });
        self.graphs.clear();
        // A step computed ahead by the previous user kernel is not this one's.
        self.lookahead = None;
        Ok(contract)
    }

    /// The contract of the loaded user kernel, if one is loaded.
    pub fn user_contract(&self) -> Option<&UserContract> {
        self.user.as_ref().map(|user| &user.contract)
    }

    /// Advances `steps` steps with the loaded user kernel (one launch per step).
    pub fn advance_user(&mut self, steps: u64, params: &StepParams) -> Result<Duration> {
        let lookahead = self.lookahead.take();
        self.last_params = Some(*params);
        let boundary = params.boundary;
        let contract = self
            .user
            .as_ref()
            .map(|user| user.contract.clone())
            .ok_or_else(|| HeatlabError::InvalidInput("no user kernel is loaded".into()))?;
        if !contract.handles(boundary) {
            return Err(HeatlabError::Unsupported(format!(
                "the user kernel does not declare the {boundary} boundary in HEATLAB_BOUNDARIES"
            )));
        }
        let stream = self.device.stream().clone();
        let buffers = self.buffers()?;
        buffers.field_and_laplacian(&stream)?;
        let mut steps = steps;
        // The Laplacian view's pass already computed the first step.
        if steps > 0 && lookahead == Some(Lookahead::of(Stepper::User, *params)) {
            buffers.flip();
            steps -= 1;
        }
        self.timer.start()?;
        self.launch_user_steps(steps, params)?;
        self.stop_timing()
    }

    /// Queues `launches` steps of the user kernel, flipping the buffers after each.
    pub(super) fn launch_user_steps(&mut self, launches: u64, params: &StepParams) -> Result<()> {
        let stream = self.device.stream().clone();
        let Some(user) = self.user.as_ref() else {
            return Err(HeatlabError::InvalidInput(
                "no user kernel is loaded".into(),
            ));
        };
        let buffers = self.buffers.as_mut().ok_or(HeatlabError::NoField)?;
        let config = user.contract.launch_config(buffers.size)?;
        let boundary = params.boundary.kernel_index() as i32;
        let launch = StepLaunch::User(&user.function, boundary);
        step_loop(&stream, launch, config, buffers, launches, params.coeff)
    }
}

/// Compiles `source` for `device` and looks up `user_step` in it.
pub fn load_user_function(
    device: &CudaDevice,
    source: &str,
) -> Result<(Arc<CudaModule>, CudaFunction)> {
    let ptx = compile_user_kernel(source, device.compute_capability())?;
    let module = device
        .context()
        .load_module(ptx)
        .map_err(driver_error("loading the user kernel"))?;
    let function = device.function(&module, USER_KERNEL_NAME)?;
    Ok((module, function))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_declares_the_shared_kernels_contract() {
        let contract = UserContract::parse(USER_KERNEL_TEMPLATE).unwrap();
        assert_eq!((contract.block_x, contract.block_y), (32, 8));
        assert_eq!(contract.boundaries, Boundary::ALL.to_vec());
        let config = contract
            .launch_config(GridSize { rows: 17, cols: 33 })
            .unwrap();
        assert_eq!(config.grid_dim, (2, 3, 1));
        assert_eq!(config.block_dim, (32, 8, 1));
    }

    #[test]
    fn a_field_taller_than_the_kernels_grid_reaches_is_refused_with_the_limit() {
        let source =
            USER_KERNEL_TEMPLATE.replace("#define HEATLAB_BLOCK_Y 8", "#define HEATLAB_BLOCK_Y 1");
        let contract = UserContract::parse(&source).unwrap();
        assert_eq!(contract.block_y, 1);
        let size = |rows| GridSize::new(rows, 64).unwrap();
        assert_eq!(
            contract.launch_config(size(65_535)).unwrap().grid_dim.1,
            65_535
        );
        let error = contract
            .launch_config(size(65_536))
            .unwrap_err()
            .to_string();
        assert!(error.contains("at most 65535 rows"), "{error}");
        assert!(error.contains("HEATLAB_BLOCK_Y"), "{error}");
        // The template's 8 rows a block reach the largest field.
        let template = UserContract::parse(USER_KERNEL_TEMPLATE).unwrap();
        assert!(template.launch_config(size(crate::grid::MAX_SIDE)).is_ok());
    }

    #[test]
    fn contract_mistakes_name_their_line() {
        let source = "#define HEATLAB_BLOCK_X 32\n#define HEATLAB_BLOCK_Y 0\n";
        let error = UserContract::parse(source).unwrap_err();
        assert_eq!(error.line, Some(2));
        assert!(error.message.contains("1 to 1024"));
        let source = "#define HEATLAB_BLOCK_X 64\n#define HEATLAB_BLOCK_Y 32\n\
                      #define HEATLAB_BOUNDARIES \"dirichlet\"\n";
        assert!(UserContract::parse(source)
            .unwrap_err()
            .message
            .contains("2048 threads"));
        let source = "#define HEATLAB_BLOCK_X 16\n#define HEATLAB_BLOCK_Y 16\n\
                      #define HEATLAB_BOUNDARIES \"dirichlet sticky\"\n";
        let error = UserContract::parse(source).unwrap_err();
        assert_eq!(error.line, Some(3));
        assert!(error.message.contains("unknown boundary 'sticky'"));
        let source = "#define HEATLAB_BLOCK_X 16\n#define HEATLAB_BLOCK_Y 16\n";
        let error = UserContract::parse(source).unwrap_err();
        assert_eq!(error.line, None);
        assert!(error.message.contains("HEATLAB_BOUNDARIES"));
        let source = "#define HEATLAB_BLOCK_X 16\n#define HEATLAB_BLOCK_Y 4\n\
                      #define HEATLAB_BOUNDARIES \"periodic, dirichlet\"\n";
        let contract = UserContract::parse(source).unwrap();
        assert_eq!(
            contract.boundaries,
            vec![Boundary::Periodic, Boundary::Dirichlet]
        );
        assert!(!contract.handles(Boundary::Neumann));
    }

    #[test]
    fn nvrtc_diagnostics_point_at_lines() {
        let log = "user_step.cu(12): error: identifier \"x\" is undefined\n\
                   user_step.cu(40): warning #177-D: variable \"y\" was declared but never referenced\n\
                   \n1 error detected in the compilation of \"user_step.cu\".\n";
        let diagnostics = compile_diagnostics(log);
        assert_eq!(diagnostics.len(), 2);
        assert_eq!(diagnostics[0].line, 12);
        assert!(diagnostics[0].is_error);
        assert_eq!(
            diagnostics[0].message,
            "error: identifier \"x\" is undefined"
        );
        assert_eq!(diagnostics[1].line, 40);
        assert!(!diagnostics[1].is_error);
    }
}
