//! A pool of storage buffers in size classes. A tensor's buffer goes back to the pool when
//! the last tensor viewing it is dropped, and the next allocation of its class reuses it.
//!
//! Reuse needs no fence: all work goes through one queue in submission order, and work not
//! yet submitted holds its buffers (so they are not in the pool while it may still read
//! them). A buffer is never sub-allocated, since WebGPU forbids binding one buffer both
//! read-only and writable in a dispatch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The smallest buffer handed out (also what empty tensors get, as bindings cannot be
/// empty).
const SMALLEST: u64 = 256;

/// Free buffers kept for reuse, in bytes, before freed ones are released to the driver.
const KEEP_BYTES: u64 = 1 << 30;

pub(crate) struct Pool {
    device: wgpu::Device,
    free: Mutex<Free>,
}

#[derive(Default)]
struct Free {
    by_class: HashMap<u64, Vec<wgpu::Buffer>>,
    bytes: u64,
}

/// A storage buffer from the pool, returned to it when dropped.
pub(crate) struct Buffer {
    buffer: Option<wgpu::Buffer>,
    pool: Arc<Pool>,
}

impl Pool {
    pub fn new(device: wgpu::Device) -> Pool {
        Pool {
            device,
            free: Mutex::new(Free::default()),
        }
    }

    /// A buffer of at least `bytes` bytes (contents undefined).
    pub fn take(self: &Arc<Pool>, bytes: u64) -> Buffer {
        let class = class_of(bytes);
        let reused = self.free.lock().ok().and_then(|mut free| {
            let buffer = free.by_class.get_mut(&class)?.pop()?;
            free.bytes -= class;
            Some(buffer)
        });
        let buffer = reused.unwrap_or_else(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tensor"),
                size: class,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        Buffer {
            buffer: Some(buffer),
            pool: self.clone(),
        }
    }

    fn give_back(&self, buffer: wgpu::Buffer) {
        let Ok(mut free) = self.free.lock() else {
            return;
        };
        let class = buffer.size();
        if free.bytes + class > KEEP_BYTES {
            buffer.destroy();
            return;
        }
        free.bytes += class;
        free.by_class.entry(class).or_default().push(buffer);
    }
}

impl Buffer {
    pub fn raw(&self) -> &wgpu::Buffer {
        self.buffer
            .as_ref()
            .expect("a pooled buffer is present until dropped")
    }

    pub fn size(&self) -> u64 {
        self.raw().size()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            self.pool.give_back(buffer);
        }
    }
}

/// The size class of a request: powers of two up to 1 MiB, then multiples of an eighth of
/// the next power of two (so at most 12.5% is wasted on large tensors).
fn class_of(bytes: u64) -> u64 {
    let bytes = bytes.max(SMALLEST);
    let power = bytes.next_power_of_two();
    if power <= 1 << 20 {
        return power;
    }
    let step = power / 8;
    bytes.div_ceil(step) * step
}

#[cfg(test)]
mod tests {
    use super::class_of;

    #[test]
    fn classes_round_up_with_bounded_waste() {
        assert_eq!(class_of(0), 256);
        assert_eq!(class_of(257), 512);
        assert_eq!(class_of(1 << 20), 1 << 20);
        assert_eq!(class_of((1 << 20) + 1), (1 << 20) + (1 << 18));
        for bytes in [3_000_000u64, 70_000_000, 1 << 30] {
            let class = class_of(bytes);
            assert!(
                class >= bytes && class - bytes <= bytes / 4,
                "{bytes} -> {class}"
            );
        }
    }
}
