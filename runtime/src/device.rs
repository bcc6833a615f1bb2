//! Devices and memory formats.

use std::fmt;

/// Where a tensor's data lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Device {
    /// Host memory.
    #[default]
    Cpu,
    /// A CUDA device (reserved: no kernels are registered for it yet).
    Cuda(u8),
    /// Tensors with sizes, strides and dtype but no data: running an op on them runs only its
    /// meta function.
    Meta,
    /// An out-of-tree backend registered under the `PrivateUse1` dispatch key.
    PrivateUse1(u8),
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
            Device::Meta => f.write_str("meta"),
            Device::PrivateUse1(i) => write!(f, "privateuseone:{i}"),
        }
    }
}

/// How a tensor's dims are laid out in memory (`torch.memory_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemoryFormat {
    /// Row-major (C order).
    #[default]
    Contiguous,
    /// Keep the input's layout (`torch.preserve_format`).
    Preserve,
    /// NHWC order for 4-d tensors.
    ChannelsLast,
    /// NDHWC order for 5-d tensors.
    ChannelsLast3d,
}

impl fmt::Display for MemoryFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryFormat::Contiguous => "contiguous_format",
            MemoryFormat::Preserve => "preserve_format",
            MemoryFormat::ChannelsLast => "channels_last",
            MemoryFormat::ChannelsLast3d => "channels_last_3d",
        })
    }
}

/// Tensor layouts; only strided tensors exist today.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    #[default]
    Strided,
}
