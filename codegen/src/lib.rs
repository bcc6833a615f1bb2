//! oxten's code generator.
pub mod backend;
pub mod derivatives;
pub mod doc_examples;
pub mod emit;
pub mod kernel_impls;
pub mod library;
pub mod locate;
pub mod model;
pub mod pointwise;
pub mod selective;
pub mod yaml;
