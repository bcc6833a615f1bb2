//! Test helpers shared by the integration tests.

pub mod golden;
pub mod op_fuzz;
