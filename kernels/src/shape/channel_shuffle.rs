//! `channel_shuffle` and `native_channel_shuffle`: a reshape, transpose and copy, so autograd and
//! every backend come from those operators.

use crate::generated::decls::{ChannelShuffleCompositeImplicit, NativeChannelShuffleCompositeImplicit};
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

/// `channel_shuffle`'s checks (PyTorch's, also made by the math form here, which would otherwise
/// index missing dims).
fn check_channel_shuffle(self_: &Tensor, groups: i64) -> Result<()> {
    if self_.dim() <= 2 {
        return Err(Error::runtime(format!(
            "channel_shuffle expects input with > 2 dims, but got input with sizes {:?}",
            &self_.sizes()[..]
        )));
    }
    if groups <= 0 {
        return Err(Error::runtime(format!(
            "Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )));
    }
    let c = self_.sizes()[1];
    if c % groups != 0 {
        return Err(Error::runtime(format!(
            "Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )));
    }
    Ok(())
}

impl ChannelShuffleCompositeImplicit for Composite {
    fn channel_shuffle(self_: &Tensor, groups: i64) -> Result<Tensor> {
        check_channel_shuffle(self_, groups)?;
        ops::native_channel_shuffle::call(self_, groups)
    }
}

impl NativeChannelShuffleCompositeImplicit for Composite {
    /// `[N, g·k, *]` viewed as `[N, g, k, *]` and transposed to `[N, k, g, *]`: channel `i·k + j`
    /// moves to `j·g + i` (ShuffleNet's shuffle), as a copy.
    fn native_channel_shuffle(self_: &Tensor, groups: i64) -> Result<Tensor> {
        check_channel_shuffle(self_, groups)?;
        if self_.numel() == 0 {
            return ops::deep_clone::call(self_, None);
        }
        let s = self_.sizes();
        let (n, c) = (s[0], s[1]);
        self_.try_reshape(&[n, groups, c / groups, -1])?.try_permute(&[0, 2, 1, 3])?.try_contiguous()?.try_reshape(&s)
    }
}
