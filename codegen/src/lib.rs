//! oxten's code generator.
pub mod backend;
pub mod derivatives;
pub mod emit;
pub mod locate;
pub mod model;
pub mod pointwise;
pub mod yaml;
