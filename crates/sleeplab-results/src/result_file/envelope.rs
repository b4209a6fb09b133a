//! The envelope every result shares (version, tool, machine, settings, timing) around
//! one experiment's data, and the survey's data, which nests envelopes.

use super::host_noise::HostNoise;
use super::survey::{Level, StageStatus};
use crate::settings::RunSettings;
use crate::{Point, ResultData, Sample};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::system::Fingerprint;

/// The tool that wrote a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInfo {
    /// Always `sleeplab`.
    pub name: String,
    /// The sleeplab version.
    pub version: String,
}

impl Default for ToolInfo {
    fn default() -> Self {
        Self {
            name: "sleeplab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The data asked for belongs to another experiment (the one named).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the result holds {0} data")]
pub struct OtherExperiment(pub &'static str);

/// Declares [`ExperimentData`] from the experiments' list
/// ([`crate::experiments::with_experiments`]) and the survey's data: the enum (for
/// serde), its one match ([`ExperimentData::as_data`]), and the conversions between
/// each experiment's data and the enum.
macro_rules! experiment_data {
    ($($(#[$doc:meta])* $variant:ident($data:ty),)*) => {
        /// The data of one experiment, tagged by its name. The enum exists for serde; what
        /// readers do with the data goes through [`ExperimentData::as_data`].
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "experiment", content = "data", rename_all = "snake_case")]
        pub enum ExperimentData {
            $($(#[$doc])* $variant($data),)*
        }

        impl ExperimentData {
            /// The data, as every reader asks of it.
            pub fn as_data(&self) -> &dyn ResultData {
                match self {
                    $(ExperimentData::$variant(d) => d,)*
                }
            }
        }

        $(
            impl From<$data> for ExperimentData {
                fn from(d: $data) -> Self {
                    ExperimentData::$variant(d)
                }
            }

            impl<'a> TryFrom<&'a ExperimentData> for &'a $data {
                type Error = OtherExperiment;

                fn try_from(d: &'a ExperimentData) -> Result<Self, OtherExperiment> {
                    match d {
                        ExperimentData::$variant(x) => Ok(x),
                        other => Err(OtherExperiment(other.name())),
                    }
                }
            }
        )*
    };
}

// Every experiment's data, each once, after the survey's (which nests the others' results
// and lives here, in the model): the list is the experiments' own.
crate::experiments::with_experiments!(experiment_data {
    /// `sleeplab survey`: a short version of every experiment, each stage's result inside.
    Survey(SurveyData),
});

impl ExperimentData {
    /// The experiment's name as used on the command line.
    pub fn name(&self) -> &'static str {
        self.as_data().experiment()
    }

    /// This data, or a survey's stages' data, in order.
    pub fn into_flat(self) -> Vec<ExperimentData> {
        match self {
            ExperimentData::Survey(s) => s.results.into_iter().map(|r| r.data).collect(),
            other => vec![other],
        }
    }
}

/// One run's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResultFile {
    /// Format version (`SCHEMA_VERSION`).
    pub schema_version: u32,
    /// The tool and its version.
    pub tool: ToolInfo,
    /// False when the run was interrupted (Ctrl-C) or a stage failed: the data holds
    /// what was measured until then.
    pub complete: bool,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// End of the run, RFC 3339 UTC.
    pub finished_at: String,
    /// The exact command line.
    pub command_line: Vec<String>,
    /// The machine.
    pub fingerprint: Fingerprint,
    /// Settings of the measuring thread.
    pub settings: RunSettings,
    /// Plain-language notes and warnings about the run (e.g. more load threads than
    /// cores, a setting that could not be applied).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The host's noise of the moment: the noise probe on the measured CPUs before and
    /// after the run (a survey: before and after the whole survey, its stages none);
    /// absent in results written before it, and in a survey's stages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_noise: Option<HostNoise>,
    /// The experiment and its data.
    #[serde(flatten)]
    pub data: ExperimentData,
}

/// The result of a survey.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SurveyData {
    /// The size it ran at.
    pub level: Level,
    /// Every planned stage, in order, with how it ended.
    pub stages: Vec<StageStatus>,
    /// The results of the stages that produced one (complete or partial), in stage order.
    pub results: Vec<ResultFile>,
}

impl SurveyData {
    /// The result of the stage named `name`, if it produced one.
    pub fn stage_result(&self, name: &str) -> Option<&ResultFile> {
        self.stages
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.result)
            .and_then(|i| self.results.get(i))
    }

    /// The stage that produced result `index`.
    pub fn stage_of(&self, index: usize) -> Option<&StageStatus> {
        self.stages.iter().find(|s| s.result == Some(index))
    }
}

impl ResultData for SurveyData {
    fn experiment(&self) -> &'static str {
        "survey"
    }

    /// None of its own: readers flatten a survey into its stages' results
    /// (`report::view::Results`), whose points are matched stage by stage.
    fn points(&self) -> Vec<Point> {
        Vec::new()
    }

    /// None of its own: `samples.csv` holds every stage's samples with the stage's name.
    fn samples(&self) -> Box<dyn Iterator<Item = Sample<'_>> + '_> {
        Box::new(std::iter::empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant's serde tag is the name its data gives, and the conversions go both ways.
    #[test]
    fn serde_tags_are_the_experiment_names() {
        let survey = SurveyData {
            level: Level::Quick,
            stages: vec![],
            results: vec![],
        };
        let d = ExperimentData::from(survey.clone());
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["experiment"], d.name());
        assert_eq!(<&SurveyData>::try_from(&d), Ok(&survey));
        assert_eq!(
            <&crate::experiments::sweep::SweepData>::try_from(&d),
            Err(OtherExperiment("survey"))
        );
    }
}
