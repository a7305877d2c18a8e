//! What the static checks learn about a program besides its diagnostics, as plain data: which
//! definition every name refers to, and which names are visible where. Editors read these for
//! go to definition, hover and completion.

use crate::source::Span;

/// What a definition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefinitionKind {
    /// A parameter of a user function.
    Parameter,
    /// A size named in a parameter's annotation (`n` in `x: f32[n, 3]`).
    Dim,
    /// A `let` or `for` variable inside a function or block.
    Local,
    /// A top-level `let`.
    Global,
    Function,
    /// The name a `use` binds.
    Module,
}

/// Where a name used in the program is defined.
#[derive(Clone, Debug, PartialEq)]
pub enum Definition {
    /// Defined in source: this file, a used file or a std module (by the span's file).
    Source { kind: DefinitionKind, span: Span },
    /// A builtin function (`zeros`), or a dtype (`f32`).
    Builtin(String),
    /// A tensor method (`x.sum`).
    Method(String),
}

/// One use of a name and what it refers to.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub span: Span,
    pub definition: Definition,
}

/// A name bound in a scope and the byte range of the file where it is visible.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub name: String,
    pub kind: DefinitionKind,
    /// Where it is defined.
    pub span: Span,
    /// Offsets from which it is visible (after its statement) to the end of its scope.
    pub visible: std::ops::Range<u32>,
}

/// A module a `use` binds, with its members.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleFacts {
    /// The name the `use` binds.
    pub name: String,
    /// Where the `use` binds it.
    pub span: Span,
    /// The module's functions, variables and the modules it uses, sorted by name.
    pub members: Vec<Binding>,
}

/// Everything the name resolver learnt about one file.
#[derive(Clone, Debug, Default)]
pub struct NameFacts {
    /// Every resolved use of a name, member or method, in source order.
    pub references: Vec<Reference>,
    /// Locals and top-level variables with where they are visible.
    pub bindings: Vec<Binding>,
    /// The file's functions, `use` names and top-level variables, visible in every function.
    pub globals: Vec<Binding>,
    /// The modules the file uses whose members are known.
    pub modules: Vec<ModuleFacts>,
}

impl NameFacts {
    /// The reference whose span contains `offset`, innermost first.
    pub fn reference_at(&self, offset: u32) -> Option<&Reference> {
        self.references
            .iter()
            .filter(|reference| reference.span.start <= offset && offset <= reference.span.end)
            .min_by_key(|reference| reference.span.end - reference.span.start)
    }

    /// The locals visible at `offset` (innermost last when names repeat).
    pub fn visible_at(&self, offset: u32) -> impl Iterator<Item = &Binding> {
        self.bindings
            .iter()
            .filter(move |binding| binding.visible.contains(&offset))
    }
}
