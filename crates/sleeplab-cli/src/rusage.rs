//! What waiting costs the waiting thread: CPU time and context switches. The type lives
//! in the library, where the periodic mechanisms also report their helpers' usage with it.

pub use sleeplab::wait::ThreadUsage;
