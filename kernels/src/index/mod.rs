//! Indexing operators: `index_select`, `gather`, `scatter` (src, value, add), `masked_fill`,
//! `nonzero`, `embedding` (and its dense backward), advanced indexing (`index.Tensor`,
//! `index_put_`, `index_put`). Shared pieces (overlap checks, the row walker, accumulation) are in `common`.

mod advanced;
pub(crate) mod common;
#[cfg(feature = "cuda")]
mod cuda;
mod embedding_renorm;
mod gather;
mod masked;
mod masked_index;
mod nonzero;
mod search;
mod select;
mod unravel;
mod updates;
