//! oxten's code generator.
pub mod emit;
pub mod model;
pub mod pointwise;
pub mod yaml;
