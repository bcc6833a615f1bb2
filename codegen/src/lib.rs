//! oxten's code generator.
pub mod derivatives;
pub mod emit;
pub mod model;
pub mod pointwise;
pub mod yaml;
