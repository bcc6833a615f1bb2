//! Streams and events: a current stream per device and thread (PyTorch's
//! `getCurrentCUDAStream`), the guard that changes it for a scope, and timing events.

use super::{context, device_index, driver_error, MAX_DEVICES};
use crate::device::Device;
use crate::error::Result;
use cudarc::driver::{result as drv, sys};
use std::cell::Cell;

/// A CUDA stream of one device. The default stream is the device's legacy null stream, as in
/// PyTorch; [`Stream::new`] makes a non-blocking one that lives until the program ends (streams
/// are few and are referred to by kernels queued on them, so they are never destroyed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stream {
    device: Device,
    raw: u64,
}

impl Stream {
    /// The default (null) stream of `device`.
    pub fn default_for(device: Device) -> Stream {
        Stream { device, raw: 0 }
    }

    /// A new stream on `device` that does not synchronise with the default stream.
    pub fn new(device: Device) -> Result<Stream> {
        context(device)?;
        let s =
            drv::stream::create(drv::stream::StreamKind::NonBlocking).map_err(|e| driver_error("cuStreamCreate", e))?;
        Ok(Stream { device, raw: s as u64 })
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The driver handle as an integer (0 for the default stream).
    pub fn id(&self) -> u64 {
        self.raw
    }

    /// The driver handle.
    pub fn raw(&self) -> sys::CUstream {
        self.raw as sys::CUstream
    }

    /// Waits until all work queued on the stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        context(self.device)?;
        // SAFETY: the handle is a live stream of this context (or the null stream).
        unsafe { drv::stream::synchronize(self.raw()) }.map_err(|e| driver_error("cuStreamSynchronize", e))
    }

    /// Makes future work on this stream wait for `event`.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        context(self.device)?;
        // SAFETY: both handles are live objects of this device's context.
        unsafe { drv::stream::wait_event(self.raw(), event.raw, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
            .map_err(|e| driver_error("cuStreamWaitEvent", e))
    }
}

impl Stream {
    /// Makes future work on this stream wait for the work queued on `other` so far
    /// (`stream.wait_stream(other)`); nothing to do when they are the same stream.
    pub fn wait_stream(&self, other: Stream) -> Result<()> {
        if *self == other {
            return Ok(());
        }
        context(other.device)?;
        let ev = drv::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(|e| driver_error("cuEventCreate", e))?;
        // SAFETY: `ev` is a live event of this context and both streams are live streams of their
        // devices; destroying an event after a wait on it was queued is allowed (the wait keeps
        // what it needs).
        unsafe {
            let r = drv::event::record(ev, other.raw()).map_err(|e| driver_error("cuEventRecord", e)).and_then(|()| {
                context(self.device)?;
                drv::stream::wait_event(self.raw(), ev, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                    .map_err(|e| driver_error("cuStreamWaitEvent", e))
            });
            if context(other.device).is_ok() {
                let _ = drv::event::destroy(ev);
            }
            r
        }
    }
}

thread_local! {
    static CURRENT: Cell<[u64; MAX_DEVICES]> = const { Cell::new([0; MAX_DEVICES]) };
}

/// The stream kernels on `device` are queued on from this thread.
pub fn current_stream(device: Device) -> Stream {
    let i = device_index(device).unwrap_or(0);
    Stream { device, raw: CURRENT.with(|c| c.get()[i]) }
}

/// Makes `stream` the current stream of its device on this thread.
pub fn set_current_stream(stream: Stream) {
    if let Ok(i) = device_index(stream.device) {
        CURRENT.with(|c| {
            let mut v = c.get();
            v[i] = stream.raw;
            c.set(v);
        });
    }
}

/// Makes a stream current for a scope and restores the previous one when dropped
/// (`with torch.cuda.stream(s):`).
pub struct StreamGuard {
    previous: Stream,
}

impl StreamGuard {
    /// Makes `stream` current until the guard is dropped.
    pub fn new(stream: Stream) -> StreamGuard {
        let previous = current_stream(stream.device);
        set_current_stream(stream);
        StreamGuard { previous }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        set_current_stream(self.previous);
    }
}

/// Waits until all work on every stream of `device` has finished (`torch.cuda.synchronize()`).
pub fn synchronize(device: Device) -> Result<()> {
    context(device)?.synchronize().map_err(|e| driver_error("cuCtxSynchronize", e))
}

/// A CUDA event, for ordering streams and timing (`torch.cuda.Event(enable_timing=True)`).
pub struct Event {
    device: Device,
    raw: sys::CUevent,
}

// SAFETY: an event handle is an opaque driver object usable from any thread.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    /// A timing event on `device`.
    pub fn new(device: Device) -> Result<Event> {
        context(device)?;
        let raw =
            drv::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(|e| driver_error("cuEventCreate", e))?;
        Ok(Event { device, raw })
    }

    /// Records the event on `stream`: it completes when the work queued there before it has.
    pub fn record(&self, stream: Stream) -> Result<()> {
        context(self.device)?;
        // SAFETY: both handles are live objects of this device's context.
        unsafe { drv::event::record(self.raw, stream.raw()) }.map_err(|e| driver_error("cuEventRecord", e))
    }

    /// Waits for the event.
    pub fn synchronize(&self) -> Result<()> {
        context(self.device)?;
        // SAFETY: a live event.
        unsafe { drv::event::synchronize(self.raw) }.map_err(|e| driver_error("cuEventSynchronize", e))
    }

    /// Milliseconds between this event and `end` (both recorded and complete).
    pub fn elapsed_time(&self, end: &Event) -> Result<f32> {
        context(self.device)?;
        // SAFETY: two live events of one context.
        unsafe { drv::event::elapsed(self.raw, end.raw) }.map_err(|e| driver_error("cuEventElapsedTime", e))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if context(self.device).is_ok() {
            // SAFETY: the event is ours and not used after this.
            let _ = unsafe { drv::event::destroy(self.raw) };
        }
    }
}
