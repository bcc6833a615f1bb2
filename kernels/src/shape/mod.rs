//! Shape operators: concatenation (`cat`, `stack`), splitting and regrouping views (`split`,
//! `split_with_sizes`, `chunk`, `flatten`, `unflatten`), tiling and reordering (`repeat`,
//! `roll`, `flip`) and triangles (`tril`, `triu`).

mod aliases;
pub(crate) mod cat;
mod channel_shuffle;
mod combinations;
#[cfg(feature = "cuda")]
mod cuda;
mod meshgrid;
mod pad;
mod patches;
mod rearrange;
mod repeat;
mod repeat_interleave;
mod split;
mod tri;
