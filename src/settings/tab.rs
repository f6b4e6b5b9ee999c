//! The app's top-level tabs, remembered in the settings and chosen with `heatlab gui --tab`.

use std::fmt;

use heatlab_engine::tutorial::TutorialKernel;

/// The app's top-level tabs: the diffusion simulation or one of the tutorial panels.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Tab {
    /// The heat diffusion simulation.
    #[default]
    Diffusion,
    /// The hidden layer of a neural network.
    HiddenLayer,
    /// The Gaussian PDF.
    Gaussian,
    /// Monte Carlo pi.
    #[serde(rename = "mc-pi")]
    MonteCarloPi,
    /// The Kernel lab: the diffusion kernel's source, edited, compiled and validated.
    KernelLab,
    /// The GPU basics: the maximum ladder, launch geometry, sin·exp, row sums, reductions and
    /// the device.
    GpuBasics,
}

impl Tab {
    /// Every tab, in the order the tab bar lists them.
    pub const ALL: [Self; 6] = [
        Self::Diffusion,
        Self::KernelLab,
        Self::GpuBasics,
        Self::HiddenLayer,
        Self::Gaussian,
        Self::MonteCarloPi,
    ];

    /// The tutorial kernel of this tab, or `None` for the diffusion tab.
    pub fn kernel(self) -> Option<TutorialKernel> {
        match self {
            Self::Diffusion | Self::KernelLab | Self::GpuBasics => None,
            Self::HiddenLayer => Some(TutorialKernel::HiddenLayer),
            Self::Gaussian => Some(TutorialKernel::Gaussian),
            Self::MonteCarloPi => Some(TutorialKernel::MonteCarloPi),
        }
    }

    /// The tab of a tutorial kernel.
    pub fn of(kernel: TutorialKernel) -> Self {
        match kernel {
            TutorialKernel::HiddenLayer => Self::HiddenLayer,
            TutorialKernel::Gaussian => Self::Gaussian,
            TutorialKernel::MonteCarloPi => Self::MonteCarloPi,
        }
    }

    /// The name on the command line (`diffusion`, `kernel-lab`, `gpu-basics`, `hidden-layer`,
    /// `gaussian`, `mc-pi`).
    pub fn cli_name(self) -> String {
        match self.kernel() {
            None if self == Self::KernelLab => "kernel-lab".into(),
            None if self == Self::GpuBasics => "gpu-basics".into(),
            None => "diffusion".into(),
            Some(kernel) => kernel.to_string(),
        }
    }
}

impl fmt::Display for Tab {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kernel() {
            None if *self == Self::KernelLab => "Kernel lab",
            None if *self == Self::GpuBasics => "GPU basics",
            None => "Diffusion",
            Some(kernel) => kernel.title(),
        })
    }
}

impl std::str::FromStr for Tab {
    type Err = heatlab_engine::HeatlabError;

    fn from_str(text: &str) -> heatlab_engine::Result<Self> {
        Self::ALL
            .into_iter()
            .find(|tab| tab.cli_name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                heatlab_engine::HeatlabError::InvalidInput(format!(
                    "unknown tab '{text}' (expected diffusion, kernel-lab, gpu-basics, hidden-layer, gaussian or mc-pi)"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_parse_from_their_command_line_names() {
        for tab in Tab::ALL {
            assert_eq!(tab.cli_name().parse::<Tab>().unwrap(), tab);
            if let Some(kernel) = tab.kernel() {
                assert_eq!(Tab::of(kernel), tab);
            }
        }
        assert_eq!("mc-pi".parse::<Tab>().unwrap(), Tab::MonteCarloPi);
        assert!("pi".parse::<Tab>().is_err());
        assert_eq!(Tab::Gaussian.to_string(), "Gaussian PDF");
        assert_eq!(Tab::default(), Tab::Diffusion);
    }
}
