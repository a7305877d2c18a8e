//! Modules: `use std.x` (TSL sources embedded in the binary), `use "file.tsl" as m`, and
//! function definitions with their decorators.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::value::{CompileOptions, Function, Module, Value};
use super::{Interpreter, error};
use crate::diag::{Code, Diagnostic, Result};
use crate::syntax::ast::{Decorator, FnDef, UseDecl, UseTarget};

/// The standard library: module name and source, embedded at build time.
pub const STD_MODULES: &[(&str, &str)] = &[
    ("nn", include_str!("../../std/nn.tsl")),
    ("jagged", include_str!("../../std/jagged.tsl")),
    ("shape", include_str!("../../std/shape.tsl")),
];

/// Reads a script as UTF-8, or explains why it cannot be read.
pub fn read_source(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|io| {
        Diagnostic::without_span(
            Code::InputError,
            format!("cannot read `{}`: {}", path.display(), io_reason(&io)),
        )
    })?;
    String::from_utf8(bytes).map_err(|bad| {
        let at = bad.utf8_error().valid_up_to();
        Diagnostic::without_span(
            Code::InputError,
            format!("`{}` is not valid UTF-8 (byte {at})", path.display()),
        )
        .with_help("TSL source files must be UTF-8 text")
        .into()
    })
}

fn io_reason(io: &std::io::Error) -> String {
    match io.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::IsADirectory => "it is a directory".to_string(),
        _ => io.to_string(),
    }
}

impl Interpreter {
    pub(super) fn run_use(&mut self, into: &Rc<Module>, decl: &UseDecl) -> Result<()> {
        let (module, default_name) = match &decl.target {
            UseTarget::Std(path) => {
                let names: Vec<&str> = path.iter().map(|part| &*part.name).collect();
                let [std, name] = names.as_slice() else {
                    return Err(unknown_module(&names.join("."), decl));
                };
                if *std != "std" {
                    return Err(unknown_module(&names.join("."), decl));
                }
                let Some((_, source)) = STD_MODULES.iter().find(|(known, _)| known == name) else {
                    return Err(unknown_module(&names.join("."), decl));
                };
                let alias = decl.alias.as_ref().map_or(*name, |alias| &alias.name);
                let key = format!("std.{name}");
                let module = self.load_module(&key, alias, decl, || {
                    Ok((format!("<std>/{name}.tsl"), None, (*source).to_string()))
                })?;
                (module, name.to_string())
            }
            UseTarget::File(relative, span) => {
                let base = self.sources.get(into.file).path.clone();
                let path = resolve(base.as_deref(), relative);
                let key = std::fs::canonicalize(&path)
                    .unwrap_or_else(|_| path.clone())
                    .display()
                    .to_string();
                let alias = decl.alias.as_ref().map_or("", |alias| &alias.name);
                let shown = normalize(&path).display().to_string();
                let text = self.read_source(&path);
                let module = self.load_module(&key, alias, decl, || {
                    text.map(|text| (shown, Some(path.clone()), text))
                        .map_err(|mut diagnostic| {
                            diagnostic.span = Some(*span);
                            diagnostic
                        })
                })?;
                (module, String::new())
            }
        };
        let name = decl
            .alias
            .as_ref()
            .map_or(default_name, |alias| alias.name.to_string());
        into.globals
            .borrow_mut()
            .insert(Rc::from(name), Value::Module(module));
        Ok(())
    }

    /// Loads (once) and runs a module; `source` supplies its name, path and text.
    fn load_module(
        &mut self,
        key: &str,
        alias: &str,
        decl: &UseDecl,
        source: impl FnOnce() -> Result<(String, Option<PathBuf>, String)>,
    ) -> Result<Rc<Module>> {
        if let Some(module) = self.modules.get(key) {
            return Ok(module.clone());
        }
        if self.loading.iter().any(|loading| loading == key) {
            return Err(error(
                Code::NameError,
                decl.span,
                format!("circular use of `{key}`"),
            )
            .with_help(
                "modules may not use each other in a cycle; move shared code to a third module",
            )
            .into());
        }
        let (name, path, text) = source()?;
        let file = self.sources.add(name, path, text);
        let parsed = crate::syntax::parse(file, &self.sources.get(file).text);
        if self.options.analysis {
            return Ok(self.define_used_module(key, alias, decl, file, &parsed));
        }
        if let Some((last, earlier)) = parsed.diagnostics.split_last() {
            for diagnostic in earlier {
                self.report(diagnostic);
            }
            let mut last = Box::new(last.clone());
            last.push_use(key, decl.span);
            return Err(last);
        }
        let mut module = Module::new(key.to_string(), Some(alias.to_string()), file);
        module.used_at = Some(decl.span);
        let module = self.adopt(module);
        self.loading.push(key.to_string());
        let result = self.run_module(&module, &parsed.program);
        self.loading.pop();
        result.map_err(|mut diagnostic| {
            diagnostic.push_use(key, decl.span);
            diagnostic
        })?;
        self.modules.insert(key.to_string(), module.clone());
        Ok(module)
    }

    pub(super) fn define_function(&mut self, module: &Rc<Module>, def: &Rc<FnDef>) -> Result<()> {
        let mut compile = None;
        for decorator in &def.decorators {
            compile = Some(compile_options(decorator)?);
        }
        let function = Function {
            def: def.clone(),
            module: module.clone(),
            compile,
            cache: std::cell::RefCell::default(),
        };
        module
            .globals
            .borrow_mut()
            .insert(def.name.name.clone(), Value::Function(Rc::new(function)));
        Ok(())
    }
}

/// Validates `@compile` and its options.
fn compile_options(decorator: &Decorator) -> Result<CompileOptions> {
    if &*decorator.name.name != "compile" {
        return Err(error(
            Code::NameError,
            decorator.name.span,
            format!("unknown decorator `@{}`", decorator.name.name),
        )
        .with_help("the only decorator is @compile")
        .into());
    }
    let mut options = CompileOptions::default();
    for arg in &decorator.args {
        let Some(name) = &arg.name else {
            return Err(error(
                Code::TypeError,
                arg.value.span,
                "@compile takes only keyword options",
            )
            .with_help("write @compile(dynamic = true)")
            .into());
        };
        if &*name.name != "dynamic" {
            return Err(error(
                Code::NameError,
                name.span,
                format!("unknown @compile option `{}`", name.name),
            )
            .with_help("the option is `dynamic = true` or `dynamic = false`")
            .into());
        }
        let crate::syntax::ast::ExprKind::Bool(dynamic) = arg.value.kind else {
            return Err(error(
                Code::TypeError,
                arg.value.span,
                "`dynamic` must be `true` or `false`",
            )
            .into());
        };
        options.dynamic = Some(dynamic);
    }
    Ok(options)
}

fn unknown_module(name: &str, decl: &UseDecl) -> Box<Diagnostic> {
    let known: Vec<String> = STD_MODULES
        .iter()
        .map(|(name, _)| format!("std.{name}"))
        .collect();
    error(
        Code::NameError,
        decl.span,
        format!("unknown module `{name}`"),
    )
    .with_help(format!(
        "the standard modules are {}; local files are used as `use \"file.tsl\" as name`",
        known.join(", ")
    ))
    .into()
}

/// A path with `.` and `..` components resolved lexically, as diagnostics show file names.
fn normalize(path: &Path) -> PathBuf {
    crate::source::normalize(path)
}

/// A `use` path relative to the directory of the file that uses it.
fn resolve(base: Option<&Path>, relative: &str) -> PathBuf {
    let relative = Path::new(relative);
    match base.and_then(Path::parent) {
        Some(directory) if relative.is_relative() => directory.join(relative),
        _ => relative.to_path_buf(),
    }
}
