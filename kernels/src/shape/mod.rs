//! Shape operators: concatenation (`cat`, `stack`), splitting and regrouping views (`split`,
//! `split_with_sizes`, `chunk`, `flatten`, `unflatten`), tiling and reordering (`repeat`,
//! `roll`, `flip`), triangles (`tril`, `triu`) and resizing in place (`resize_`, `resize_as_`).

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
mod resize;
mod split;
mod tri;
