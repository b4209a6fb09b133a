//! Shared helpers of the library's integration tests.

#![allow(dead_code)] // each test binary uses its own subset

pub mod periodic;
pub mod rng;
pub mod storm;
