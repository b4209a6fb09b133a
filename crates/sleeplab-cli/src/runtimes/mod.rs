//! Language-runtime probes: the protocol they speak ([`protocol`]), the runtimes that
//! have one and how to build and launch each ([`catalog`]), and the bounded, killable
//! launching of a probe process ([`runner`]). The `runtimes` experiment
//! (`crate::experiments::runtimes`) is built on these.

pub mod catalog;
pub mod protocol;
pub mod runner;
