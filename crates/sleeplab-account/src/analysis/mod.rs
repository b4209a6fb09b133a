//! Analysis: each wake's lateness split into its components on the events capture
//! recorded ([`crate::event`], the contract), and a cell's statistics of the
//! split. Pure: nothing here reads the kernel, so the account runs on a saved trace as
//! on a live one, and the tests build timelines by hand.
//!
//! * [`component`]: the components, defined once (name, label, colour, help, order);
//! * [`timeline`], [`window`], [`account`]: the events in order, a wake's window, its
//!   split;
//! * [`no_guest`]: the stretches the guest recorded nothing of its own in: an idle
//!   CPU's timer delivery (less the guest work recorded there), a spin's gaps;
//! * [`explanation`]: a cell's statistics of the split, and its JSON form;
//! * [`fallback`]: the partial account `/proc` gives where tracing is unavailable.

pub mod account;
pub mod component;
pub mod explanation;
pub mod fallback;
pub mod no_guest;
pub mod timeline;
pub mod window;
