//! oxten's code generator.
pub mod pointwise;
pub mod emit;
pub mod model;
pub mod yaml;
