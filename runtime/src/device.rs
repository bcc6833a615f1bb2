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
            Device::PrivateUse1(i) => write!(f, "{}:{i}", privateuse1_name()),
        }
    }
}

impl Device {
    /// The kind of device, without its index.
    pub const fn device_type(self) -> DeviceType {
        match self {
            Device::Cpu => DeviceType::Cpu,
            Device::Cuda(_) => DeviceType::Cuda,
            Device::Meta => DeviceType::Meta,
            Device::PrivateUse1(_) => DeviceType::PrivateUse1,
        }
    }
}

/// A kind of device (`torch.device.type`): what allocators and cross-device copy kernels are
/// registered for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceType {
    Cpu = 0,
    Cuda = 1,
    Meta = 2,
    PrivateUse1 = 3,
}

impl DeviceType {
    /// Number of device types (the size of per-device-type tables).
    pub const COUNT: usize = 4;
    /// Every device type, in index order.
    pub const ALL: [DeviceType; Self::COUNT] =
        [DeviceType::Cpu, DeviceType::Cuda, DeviceType::Meta, DeviceType::PrivateUse1];
    /// The index in per-device-type tables.
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceType::Cpu => "cpu",
            DeviceType::Cuda => "cuda",
            DeviceType::Meta => "meta",
            DeviceType::PrivateUse1 => privateuse1_name(),
        })
    }
}

static PRIVATEUSE1_NAME: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The name `PrivateUse1` devices print as: `privateuseone` until an out-of-tree backend names
/// itself with [`rename_privateuse1_backend`].
pub fn privateuse1_name() -> &'static str {
    PRIVATEUSE1_NAME.get().copied().unwrap_or("privateuseone")
}

/// Names the `PrivateUse1` device type (`torch.utils.rename_privateuse1_backend`): tensors of it
/// then print as `toy:0` and errors name it so. The first name given stays; renaming to another
/// name is an error.
pub fn rename_privateuse1_backend(name: &str) -> crate::Result<()> {
    let stored = *PRIVATEUSE1_NAME.get_or_init(|| Box::leak(name.to_string().into_boxed_str()));
    if stored != name {
        return Err(crate::Error::runtime(format!(
            "the PrivateUse1 backend is already named `{stored}`; it cannot be renamed to `{name}`"
        )));
    }
    Ok(())
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
