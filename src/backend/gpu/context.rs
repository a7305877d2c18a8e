//! Opening the GPU: adapter choice, the features and limits TSL needs, and wgpu errors
//! caught instead of panicking.

use std::sync::{Arc, Mutex, OnceLock};

use super::batch::State;
use super::pool::Pool;
use crate::backend::error::KernelError;

/// Why the GPU cannot be used. Each is an `input-error` with the fix in its help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// No Vulkan adapter at all (no driver, no loader).
    NoAdapter,
    /// `TSL_GPU_ADAPTER` names no adapter; the names there are.
    NoMatch { wanted: String, found: Vec<String> },
    /// The adapter has no 64-bit shader integers.
    NoInt64 { adapter: String },
    /// The adapter refused to open a device.
    Refused { adapter: String, reason: String },
}

impl OpenError {
    pub fn message(&self) -> String {
        match self {
            OpenError::NoAdapter => "no GPU adapter found (no Vulkan driver answered)".into(),
            OpenError::NoMatch { wanted, found } => format!(
                "TSL_GPU_ADAPTER={wanted} matches no GPU adapter (found: {})",
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found.join(", ")
                }
            ),
            OpenError::NoInt64 { adapter } => format!(
                "the GPU `{adapter}` has no 64-bit integers in shaders (SHADER_INT64), which TSL's i64 needs"
            ),
            OpenError::Refused { adapter, reason } => {
                format!("the GPU `{adapter}` could not be opened: {reason}")
            }
        }
    }

    pub fn help(&self) -> &'static str {
        match self {
            OpenError::NoAdapter => {
                "install a Vulkan driver (on Debian or Ubuntu, `apt-get install mesa-vulkan-drivers` \
                 gives a software device), or run with `--device cpu`"
            }
            OpenError::NoMatch { .. } => {
                "set TSL_GPU_ADAPTER to part of one of the names found, or unset it"
            }
            OpenError::NoInt64 { .. } | OpenError::Refused { .. } => {
                "run with `--device cpu`, or choose another adapter with TSL_GPU_ADAPTER"
            }
        }
    }
}

/// An open GPU: the device, its queue, what it allows, and the state of queued work.
pub(crate) struct Context {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// The adapter's name, for messages and benchmarks.
    pub name: String,
    pub limits: wgpu::Limits,
    pub pool: Arc<Pool>,
    pub state: Mutex<State>,
    /// Errors wgpu reported outside an error scope, or the device's loss.
    pub errors: Arc<Mutex<Vec<String>>>,
    pub stats: Mutex<Stats>,
}

/// What the GPU did so far: for tests of residency and for benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Host tensors copied to the GPU, and their bytes.
    pub uploads: u64,
    pub upload_bytes: u64,
    /// Times the host waited to read results back (downloads, elements, counts, status).
    pub readbacks: u64,
    pub dispatches: u64,
    /// Elementwise kernels that wrote into an input's buffer.
    pub in_place: u64,
    /// Kernels compiled (once per structure).
    pub pipelines: u64,
}

impl Context {
    pub fn open() -> Result<Context, OpenError> {
        let adapter = choose(pollster::block_on(
            instance().enumerate_adapters(wgpu::Backends::VULKAN),
        ))?;
        let info = adapter.get_info();
        let name = info.name.clone();
        if !adapter.features().contains(wgpu::Features::SHADER_INT64) {
            return Err(OpenError::NoInt64 { adapter: name });
        }
        // The adapter's own limits: wgpu's defaults allow 8 storage buffers per stage and
        // 128 MiB bindings even where the device offers far more.
        let limits = adapter.limits();
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("tsl"),
            required_features: wgpu::Features::SHADER_INT64,
            required_limits: limits.clone(),
            ..wgpu::DeviceDescriptor::default()
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&descriptor)).map_err(|error| {
                OpenError::Refused {
                    adapter: name.clone(),
                    reason: error.to_string(),
                }
            })?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let uncaptured = errors.clone();
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            if let Ok(mut errors) = uncaptured.lock() {
                errors.push(error.to_string());
            }
        }));
        let lost = errors.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut errors) = lost.lock() {
                errors.push(format!("the GPU device was lost ({reason:?}): {message}"));
            }
        });
        Ok(Context {
            pool: Arc::new(Pool::new(device.clone())),
            state: Mutex::new(State::new(&device, &queue)),
            device,
            queue,
            name,
            limits,
            errors,
            stats: Mutex::new(Stats::default()),
        })
    }

    /// The first error wgpu reported since the last call, as an internal error.
    pub fn take_error(&self) -> Result<(), KernelError> {
        let mut errors = self.errors.lock().map_err(|_| poisoned())?;
        match errors.drain(..).next() {
            Some(error) => Err(KernelError::Internal(format!("the GPU reported: {error}"))),
            None => Ok(()),
        }
    }

    /// The largest tensor one kernel may bind, in bytes.
    pub fn max_binding(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }
}

pub(crate) fn poisoned() -> KernelError {
    KernelError::Internal("the GPU state is unusable after an earlier failure".into())
}

/// The process's one Vulkan instance. Each GPU session opens its own device, but they share
/// the instance: NVIDIA's driver let a process create only 29 instances in all, even with each
/// dropped before the next was made, so a process that opened the GPU anew per interpreter
/// (a test harness, an editor session running many scripts) soon found no adapter at all.
fn instance() -> &'static wgpu::Instance {
    static INSTANCE: OnceLock<wgpu::Instance> = OnceLock::new();
    INSTANCE.get_or_init(|| {
        wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        })
    })
}

/// The adapter to use: the one `TSL_GPU_ADAPTER` names (a case-insensitive part of its
/// name), else the most capable kind found (a discrete GPU before an integrated one before
/// a software device).
fn choose(adapters: Vec<wgpu::Adapter>) -> Result<wgpu::Adapter, OpenError> {
    if let Ok(wanted) = std::env::var("TSL_GPU_ADAPTER")
        && !wanted.is_empty()
    {
        let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        let needle = wanted.to_lowercase();
        return adapters
            .into_iter()
            .find(|adapter| adapter.get_info().name.to_lowercase().contains(&needle))
            .ok_or(OpenError::NoMatch {
                wanted,
                found: names,
            });
    }
    adapters
        .into_iter()
        .min_by_key(|adapter| match adapter.get_info().device_type {
            wgpu::DeviceType::DiscreteGpu => 0,
            wgpu::DeviceType::IntegratedGpu => 1,
            wgpu::DeviceType::VirtualGpu => 2,
            wgpu::DeviceType::Cpu => 3,
            wgpu::DeviceType::Other => 4,
        })
        .ok_or(OpenError::NoAdapter)
}
