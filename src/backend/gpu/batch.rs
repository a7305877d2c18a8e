//! Queued work: dispatches and copies recorded without waiting, their parameter blocks, the
//! pipelines they use, and the status buffer kernels report failures in.
//!
//! Nothing is encoded until a flush: then one uniform buffer receives every parameter block,
//! bind groups are made, the commands are encoded in order (consecutive dispatches share a
//! compute pass) and submitted. Commands hold their buffers until then, so a buffer is back
//! in the pool only when no unsubmitted command uses it. A flush happens when enough work is
//! queued, and before anything is read back.
//!
//! The status buffer holds `u32::MAX` everywhere between syncs. A failing kernel writes
//! `atomicMin(status[0], slot)` and `atomicMin(status[1 + slot], position)`. Slots are handed
//! out in the order work is queued, which is program order, so the smallest failing slot is
//! the failure eager code would have met first, and its word is the first failing position.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::codegen::{Binding, Wgsl};
use super::pool::Buffer;
use super::tensor::Tensor;
use crate::backend::error::KernelError;
use crate::backend::exec::Site;

/// How many slots the status buffer has; when they run out, queued work is checked and the
/// slots start over.
pub(crate) const STATUS_SLOTS: usize = 16_384;

/// Dispatches queued before a flush is forced.
const MAX_QUEUED: usize = 256;

/// A compiled kernel and the layout of its bindings.
pub(crate) struct Pipeline {
    pub compiled: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub bindings: Vec<Binding>,
}

/// One queued command.
pub(crate) enum Command {
    Dispatch {
        pipeline: Arc<Pipeline>,
        /// The tensors bound, in binding order (parameters and status excluded).
        buffers: Vec<Arc<Buffer>>,
        params: Range<u64>,
        groups: (u32, u32),
    },
    Copy {
        from: wgpu::Buffer,
        /// Keeps a pooled source out of the pool until the copy is submitted.
        #[allow(dead_code)] // held, never read
        keep: Option<Arc<Buffer>>,
        from_offset: u64,
        to: wgpu::Buffer,
        to_offset: u64,
        size: u64,
    },
}

/// What a failure in a slot means, so the host can rebuild the CPU's error.
#[derive(Clone, Debug)]
pub(crate) enum Report {
    /// A device assert.
    Assert,
    /// An error that does not depend on the failing element.
    Fixed(KernelError),
    /// An error of a fused kernel's member.
    InMember { member: usize, report: Box<Report> },
    /// An index out of `0..size` along `dim`: the index is the failing element of `indices`
    /// (flattened).
    Index {
        indices: Tensor,
        size: usize,
        dim: usize,
    },
    /// A negative count of `repeat_interleave`: the failing element of `counts`.
    NegativeCount { counts: Tensor },
}

/// A slot handed out: where it was queued and what its failure means.
pub(crate) struct Slot {
    pub site: Site,
    pub report: Report,
}

/// The earliest failure found in queued work, and at what element.
pub(crate) struct Found {
    pub site: Site,
    pub report: Report,
    pub position: u32,
}

pub(crate) struct State {
    pub commands: Vec<Command>,
    /// Parameter blocks, each at an offset aligned for uniform bindings.
    pub params: Vec<u8>,
    pub pipelines: HashMap<String, Arc<Pipeline>>,
    pub status: wgpu::Buffer,
    pub slots: Vec<Slot>,
    /// A failure found while slots were recycled, to report at the next sync.
    pub found: Option<Found>,
    /// The site of the operations being queued.
    pub site: Site,
    alignment: u64,
}

impl State {
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> State {
        let status = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("status"),
            size: ((STATUS_SLOTS + 1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&status, 0, &vec![0xff; (STATUS_SLOTS + 1) * 4]);
        State {
            commands: Vec::new(),
            params: Vec::new(),
            pipelines: HashMap::new(),
            status,
            slots: Vec::new(),
            found: None,
            site: Site::default(),
            alignment: u64::from(device.limits().min_uniform_buffer_offset_alignment).max(16),
        }
    }

    /// Appends a parameter block; returns its byte range in the arena.
    pub fn push_params(&mut self, words: &[u32], vectors: usize) -> Range<u64> {
        let start = (self.params.len() as u64).next_multiple_of(self.alignment);
        self.params.resize(start as usize, 0);
        for word in words {
            self.params.extend_from_slice(&word.to_le_bytes());
        }
        let end = start + (vectors * 16) as u64;
        self.params.resize(end as usize, 0);
        start..end
    }

    /// Whether enough is queued that a flush should happen before more.
    pub fn full(&self) -> bool {
        self.commands.len() >= MAX_QUEUED
    }

    /// A new status slot for a failure queued at the current site.
    pub fn slot(&mut self, report: Report) -> Option<u32> {
        if self.slots.len() >= STATUS_SLOTS {
            return None;
        }
        self.slots.push(Slot {
            site: self.site,
            report,
        });
        Some((self.slots.len() - 1) as u32)
    }
}

/// Encodes and submits every queued command; `staging` copies recorded by the caller are
/// part of the commands.
pub(crate) fn submit(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    state: &mut State,
    max_binding: u64,
) {
    if state.commands.is_empty() {
        return;
    }
    let params = std::mem::take(&mut state.params);
    let uniform = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("parameters"),
        size: (params.len() as u64).max(16).next_multiple_of(4),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    if !params.is_empty() {
        queue.write_buffer(&uniform, 0, &params);
    }
    let commands = std::mem::take(&mut state.commands);
    let groups: Vec<Option<wgpu::BindGroup>> = commands
        .iter()
        .map(|command| match command {
            Command::Dispatch {
                pipeline,
                buffers,
                params,
                ..
            } => Some(bind_group(
                device,
                pipeline,
                buffers,
                (&uniform, params.clone()),
                &state.status,
                max_binding,
            )),
            Command::Copy { .. } => None,
        })
        .collect();
    let mut encoder =
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("tsl") });
    let mut at = 0;
    while at < commands.len() {
        if let Command::Copy {
            from,
            from_offset,
            to,
            to_offset,
            size,
            ..
        } = &commands[at]
        {
            encoder.copy_buffer_to_buffer(from, *from_offset, to, *to_offset, *size);
            at += 1;
            continue;
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("kernels"),
            timestamp_writes: None,
        });
        while let Some(Command::Dispatch {
            pipeline,
            groups: (x, y),
            ..
        }) = commands.get(at)
        {
            pass.set_pipeline(&pipeline.compiled);
            pass.set_bind_group(0, groups[at].as_ref(), &[]);
            pass.dispatch_workgroups(*x, *y, 1);
            at += 1;
        }
    }
    queue.submit([encoder.finish()]);
}

fn bind_group(
    device: &wgpu::Device,
    pipeline: &Pipeline,
    buffers: &[Arc<Buffer>],
    (uniform, params): (&wgpu::Buffer, Range<u64>),
    status: &wgpu::Buffer,
    max_binding: u64,
) -> wgpu::BindGroup {
    let mut tensors = buffers.iter();
    let entries: Vec<wgpu::BindGroupEntry> = pipeline
        .bindings
        .iter()
        .enumerate()
        .map(|(number, binding)| {
            let resource = match binding {
                Binding::Params => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: uniform,
                    offset: params.start,
                    size: wgpu::BufferSize::new(params.end - params.start),
                }),
                Binding::Status => status.as_entire_binding(),
                Binding::Read | Binding::Write => {
                    let buffer = tensors
                        .next()
                        .expect("a dispatch binds a buffer for every tensor binding");
                    let size = buffer.size().min(max_binding / 4 * 4);
                    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: buffer.raw(),
                        offset: 0,
                        size: wgpu::BufferSize::new(size),
                    })
                }
            };
            wgpu::BindGroupEntry {
                binding: number as u32,
                resource,
            }
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.layout,
        entries: &entries,
    })
}

/// Compiles a generated kernel; a WGSL or pipeline error (a bug of the generator) is an
/// internal error, never a panic.
pub(crate) fn compile(device: &wgpu::Device, wgsl: &Wgsl) -> Result<Pipeline, KernelError> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(wgsl.source.as_str().into()),
    });
    let entries: Vec<wgpu::BindGroupLayoutEntry> = wgsl
        .bindings
        .iter()
        .enumerate()
        .map(|(number, binding)| wgpu::BindGroupLayoutEntry {
            binding: number as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match binding {
                Binding::Params => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Binding::Read => storage(true),
                Binding::Write | Binding::Status => storage(false),
            },
            count: None,
        })
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    if let Some(error) = pollster::block_on(scope.pop()) {
        let first = wgsl.source.lines().next().unwrap_or_default();
        return Err(KernelError::Internal(format!(
            "a generated GPU kernel ({first}) was rejected: {error}"
        )));
    }
    Ok(Pipeline {
        compiled: pipeline,
        layout,
        bindings: wgsl.bindings.clone(),
    })
}

fn storage(read_only: bool) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Storage { read_only },
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}
