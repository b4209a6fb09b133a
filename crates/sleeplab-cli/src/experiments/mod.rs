//! The experiments. Each is a function from a config to a result value; printing and
//! saving are separate renderers of that value.

pub mod advise;
pub mod cpu;
pub mod pace;
pub mod runtimes;
pub mod short;
pub mod survey;
pub mod sweep;
pub mod timers;
