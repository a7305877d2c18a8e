//! A device assert that is not computed inside another kernel: one invocation reads the
//! condition and reports a failure in the status buffer.

use super::{Binding, Module, Param, Wgsl};

pub fn device_assert() -> Wgsl {
    let mut module = Module::new();
    module.storage("condition", "u32", Binding::Read);
    module.status();
    let offset = module.param(Param::Offset(0));
    let slot = module.param(Param::Slot(0));
    let body = format!(
        "@compute @workgroup_size(1)\n\
         fn main() {{\n\
         \x20   if (condition[{offset}] == 0u) {{ fail({slot}, 0u); }}\n\
         }}\n"
    );
    module.finish("device assert", &body)
}
