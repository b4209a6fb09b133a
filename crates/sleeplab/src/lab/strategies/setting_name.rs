//! The canonical name of a [`StrategySetting`]: its `Display`, which
//! [`StrategySetting::parse`] reads back.

use std::fmt;

use super::settings::StrategySetting;

impl fmt::Display for StrategySetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let default = Self::from_name(self.name()).map_err(|_| fmt::Error)?;
        let params: Vec<String> = self
            .params()
            .iter()
            .filter_map(|p| {
                let value = self.param_value(p.key)?;
                (Some(&value) != default.param_value(p.key).as_ref()).then(|| {
                    // fixed-margin's margin is written bare (`fixed-margin:250us`).
                    if p.key == "margin" {
                        value
                    } else {
                        format!("{}={value}", p.key)
                    }
                })
            })
            .collect();
        f.write_str(self.name())?;
        if !params.is_empty() {
            write!(f, ":{}", params.join(","))?;
        }
        Ok(())
    }
}
