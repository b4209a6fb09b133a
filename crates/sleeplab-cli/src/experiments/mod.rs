//! The experiments. Each is a function from a config to a result value; printing and
//! saving are separate renderers of that value.

pub mod sweep;
