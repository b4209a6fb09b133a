//! Language-runtime probes, the plumbing: the protocol they speak ([`protocol`]), the
//! runtimes that have one (`runtime`), where their sources are and how each is
//! prepared ([`catalog`], with compiled probes in a build cache: `build`, and sleeplab's
//! own C library and Python package found for the C and Python probes: `own_builds`), and the
//! bounded, killable launching of a probe process ([`runner`]: a [`command`] run with
//! [`child`] settings, and `observe`d: what was in force while it ran). The `runtimes` experiment is built
//! on these.

pub(crate) mod build;
pub mod catalog;
pub mod child;
pub mod command;
pub(crate) mod observe;
pub(crate) mod own_builds;
pub use sleeplab_results::protocol;
pub mod runner;
