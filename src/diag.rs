//! The one diagnostic type every stage reports with, and the stable codes of spec §7.
//!
//! This module has no rendering dependencies; `diag::render` turns diagnostics into text
//! (ariadne) or JSON lines.

pub mod panic;
pub mod render;

use std::fmt;

use crate::source::Span;

/// A stable diagnostic code. Each is documented once, in [`Code::explanation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    SyntaxError,
    NameError,
    TypeError,
    ShapeError,
    DataDependentGuard,
    DataDependentInt,
    CheckFailed,
    DeviceCheckFailed,
    InputError,
    RecompileLimit,
    ValueError,
    RecursionLimit,
    Specialization,
    InternalError,
}

impl Code {
    pub const ALL: [Code; 14] = [
        Code::SyntaxError,
        Code::NameError,
        Code::TypeError,
        Code::ShapeError,
        Code::DataDependentGuard,
        Code::DataDependentInt,
        Code::CheckFailed,
        Code::DeviceCheckFailed,
        Code::InputError,
        Code::RecompileLimit,
        Code::ValueError,
        Code::RecursionLimit,
        Code::Specialization,
        Code::InternalError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::SyntaxError => "syntax-error",
            Code::NameError => "name-error",
            Code::TypeError => "type-error",
            Code::ShapeError => "shape-error",
            Code::DataDependentGuard => "data-dependent-guard",
            Code::DataDependentInt => "data-dependent-int",
            Code::CheckFailed => "check-failed",
            Code::DeviceCheckFailed => "device-check-failed",
            Code::InputError => "input-error",
            Code::RecompileLimit => "recompile-limit",
            Code::ValueError => "value-error",
            Code::RecursionLimit => "recursion-limit",
            Code::Specialization => "specialization",
            Code::InternalError => "internal-error",
        }
    }

    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|code| code.as_str() == name)
    }

    /// What the code means, why it happens, an example and the fix (`tsl explain CODE`).
    pub fn explanation(self) -> &'static str {
        match self {
            Code::SyntaxError => {
                "The text is not TSL: a token that cannot start or continue a statement, an \
                 unclosed bracket or string, or nesting deeper than the parser allows.\n\n\
                 example:  let x = (1 + \n\
                 fix:      close the bracket: let x = (1 + 2)"
            }
            Code::NameError => {
                "A name, module, method or keyword argument that does not exist where it is \
                 used, or an assignment to a name that was never declared with `let`.\n\n\
                 example:  print(lenght)\n\
                 fix:      check the spelling; declare new variables with `let`"
            }
            Code::TypeError => {
                "A value of the wrong kind: a string where a tensor is needed, a tensor of the \
                 wrong dtype, or a function called with the wrong number of arguments.\n\n\
                 example:  tensor([1, 2]).mean()\n\
                 fix:      convert first: tensor([1, 2]).float().mean()"
            }
            Code::ShapeError => {
                "Sizes that cannot match: operands that do not broadcast, a matmul whose inner \
                 sizes differ, an index or dimension out of range, or an argument that fails \
                 its annotation (`x: f32[n, 3]`).\n\n\
                 example:  zeros(2, 3) @ zeros(4, 5)\n\
                 fix:      transpose or reshape so the inner sizes agree"
            }
            Code::DataDependentGuard => {
                "While tracing a @compile function, a true/false answer was needed from an \
                 expression over data-dependent sizes (made by item(), tolist(), nonzero(), \
                 masks...) that the reasoner cannot decide from what it knows.\n\n\
                 example:  let [u0, u1] = x.tolist()\n          if u0 * 2 == u1 * 3 { ... }\n\
                 fix:      state what you know with `check` (check u0 * 2 == u1 * 3) or \
                 `check_size u0`, or branch on data with cond(pred, then_fn, else_fn, args)"
            }
            Code::DataDependentInt => {
                "While tracing, a concrete integer was needed (range(), list indexing, a loop \
                 count) from an expression over data-dependent sizes.\n\n\
                 example:  for i in range(x.sum().item()) { ... }\n\
                 fix:      restructure with tensor operations, or pin the value with \
                 `check u0 == 4`"
            }
            Code::CheckFailed => {
                "A `check` or `check_size` on sizes or scalars was false, either eagerly or \
                 as a compiled runtime assert. The message is the check's own, interpolated \
                 with the values at the moment it failed.\n\n\
                 example:  check n <= 4, \"at most 4 rows, got {n}\"\n\
                 fix:      the input violates the stated assumption; fix the input or the check"
            }
            Code::DeviceCheckFailed => {
                "A `check` on tensor data (check all(a > 0)) was false, eagerly or inside a \
                 compiled kernel.\n\n\
                 example:  check all(a > 0), \"a must be positive\"\n\
                 fix:      the data violates the assumption; clean the data or relax the check"
            }
            Code::InputError => {
                "A bad input from outside the program: a missing or corrupt .npy file, a \
                 script that cannot be read, or a bad command-line value.\n\n\
                 example:  load(\"missing.npy\")\n\
                 fix:      check the path and that the file was written by numpy.save or save()"
            }
            Code::RecompileLimit => {
                "A warning: a @compile function was traced more than 8 times because its \
                 guards kept failing, so it now runs eagerly.\n\n\
                 fix:      mark the changing size dynamic (mark_dynamic(x, 0) or \
                 @compile(dynamic = true)); TSL_LOG=recompiles shows which guard failed"
            }
            Code::ValueError => {
                "An operation received a value it cannot work with: integer division by zero, \
                 a tensor too large to allocate, a list index out of range, an integer \
                 overflow, or an argument outside its allowed values.\n\n\
                 example:  tensor([1, 2]) // 0\n\
                 fix:      guard the value before the operation, or use float division"
            }
            Code::RecursionLimit => {
                "Function calls nested deeper than the interpreter allows (1000 calls), \
                 usually unbounded recursion.\n\n\
                 example:  fn f(n) { return f(n + 1) }\n\
                 fix:      add a base case that stops the recursion"
            }
            Code::Specialization => {
                "A note from `tsl check` or `tsl graph`: tracing without input values, the \
                 answer to a question about an input size was assumed. A compiled call \
                 answers it from its real sizes and guards on the answer (recompiling when \
                 it changes).\n\n\
                 example:  if n > 2 { ... }   (this branch specialises on n > 2)\n\
                 fix:      nothing, if both sides of the question are expected; otherwise \
                 state the fact with `check`"
            }
            Code::InternalError => {
                "A bug in TSL itself, never a mistake in the program: the compiler or the \
                 executor reached a state it should not. The diagnostic says where it \
                 happened.\n\n\
                 fix:      please report it with the program that triggered it; running \
                 with --eager avoids the compiler in the meantime"
            }
        }
    }
}

impl Code {
    /// The text under a primary span when a diagnostic gives none.
    pub fn default_label(self) -> &'static str {
        match self {
            Code::SyntaxError => "here",
            Code::NameError => "not found",
            Code::TypeError => "wrong kind of value",
            Code::ShapeError => "sizes do not fit",
            Code::DataDependentGuard | Code::DataDependentInt => "depends on data",
            Code::CheckFailed | Code::DeviceCheckFailed => "this check failed",
            Code::InputError => "cannot be used",
            Code::RecompileLimit => "compiled too often",
            Code::ValueError => "bad value",
            Code::RecursionLimit => "nested too deeply",
            Code::Specialization => "depends on an input size",
            Code::InternalError => "an internal error happened here",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A span with a message, shown under the source excerpt.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One step on the way to the error: a call of a function, or the `use` that ran a module.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// The function called (`nn.softmax`), or the module used (`std.nn`, a file path).
    pub function: String,
    pub call_site: Span,
    /// How many times in a row this same call was made (recursion), at least 1.
    pub repeated: usize,
    pub kind: FrameKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    Call,
    Use,
}

/// A problem found anywhere in TSL, from lexing to a compiled runtime assert.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// The primary location; `None` only for problems outside any source (a missing script).
    pub span: Option<Span>,
    /// Text under the primary span.
    pub label: Option<String>,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
    /// Calls from the innermost (the function the error is in) outwards to the user's code.
    pub trace: Vec<Frame>,
}

impl Diagnostic {
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Error, Some(span), message.into())
    }

    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Warning, Some(span), message.into())
    }

    pub fn note(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Note, Some(span), message.into())
    }

    /// A bug in TSL itself (`internal-error`), with the request to report it.
    pub fn internal(span: Span, message: impl std::fmt::Display) -> Diagnostic {
        Diagnostic::error(
            Code::InternalError,
            span,
            format!("internal error: {message}"),
        )
        .with_help(REPORT_HELP)
    }

    /// Integer arithmetic whose result leaves the 64-bit range (`value-error`), in eager
    /// code's words wherever it is computed (host arithmetic, or sizes when a graph runs).
    pub fn integer_overflow(span: Span) -> Diagnostic {
        Diagnostic::error(Code::ValueError, span, "integer overflow")
            .with_help("ints are 64-bit; the result does not fit")
    }

    /// Integer division or modulo by zero (`value-error`), in eager code's words wherever it
    /// is computed.
    pub fn division_by_zero(span: Span) -> Diagnostic {
        Diagnostic::error(Code::ValueError, span, "division by zero")
    }

    /// An error with no source location, such as a script file that cannot be read.
    pub fn without_span(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Error, None, message.into())
    }

    fn new(code: Code, severity: Severity, span: Option<Span>, message: String) -> Diagnostic {
        Diagnostic {
            code,
            severity,
            message,
            span,
            label: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
            trace: Vec::new(),
        }
    }

    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    #[must_use]
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// [`Diagnostic::with_secondary`] for a diagnostic already boxed.
    pub fn add_secondary(&mut self, span: Span, message: impl Into<String>) {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
    }

    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Records that the error passed through a call of `function` at `call_site`; the same
    /// call repeated (recursion) is counted rather than listed again.
    pub fn push_frame(&mut self, function: impl Into<String>, call_site: Span) {
        self.push(function.into(), call_site, FrameKind::Call);
    }

    /// Records that the error happened while running the module used at `use_site`.
    pub fn push_use(&mut self, module: impl Into<String>, use_site: Span) {
        self.push(module.into(), use_site, FrameKind::Use);
    }

    fn push(&mut self, function: String, call_site: Span, kind: FrameKind) {
        if let Some(last) = self.trace.last_mut()
            && last.function == function
            && last.call_site == call_site
        {
            last.repeated += 1;
            return;
        }
        self.trace.push(Frame {
            function,
            call_site,
            repeated: 1,
            kind,
        });
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The help of every `internal-error`: whose fault it is and what to do.
pub const REPORT_HELP: &str = "this is a bug in TSL, not in your program: please report it with the program that triggered it (--eager avoids the compiler meanwhile)";

/// The result of a stage that stops at the first error.
pub type Result<T, E = Box<Diagnostic>> = std::result::Result<T, E>;
