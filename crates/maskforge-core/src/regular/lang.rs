//! Per-type languages and their algebra.

use std::sync::Arc;

use crate::automata::{ByteDfa, Re};
use crate::error::Diagnostic;

/// The six JSON types (integers are numbers with an integral value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonType {
    Null = 0,
    Boolean = 1,
    Number = 2,
    String = 3,
    Array = 4,
    Object = 5,
}

impl JsonType {
    pub(crate) const ALL: [JsonType; 6] =
        [JsonType::Null, JsonType::Boolean, JsonType::Number, JsonType::String, JsonType::Array, JsonType::Object];

    pub(crate) fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }
}

/// What a schema admits among the values of one type.
#[derive(Debug, Clone)]
pub(crate) enum TypeLang {
    /// No value of this type.
    Excluded,
    /// Every value of this type (regular for null, boolean, number and string only).
    Any,
    /// The values whose JSON texts form this regular language.
    Lang(Re),
    /// A language this arm cannot represent; the diagnostic says why.
    Unsupported(Diagnostic),
}

/// A schema as one language per JSON type.
#[derive(Debug, Clone)]
pub(crate) struct Typed {
    pub(crate) slots: [TypeLang; 6],
}

impl Typed {
    /// The same languages, each tree behind a shared pointer (cheap to clone from the memo).
    pub(crate) fn shared(self) -> Typed {
        Typed {
            slots: self.slots.map(|slot| match slot {
                TypeLang::Lang(re) => TypeLang::Lang(Re::shared(re)),
                other => other,
            }),
        }
    }

    pub(crate) fn any() -> Typed {
        Typed { slots: std::array::from_fn(|_| TypeLang::Any) }
    }

    pub(crate) fn nothing() -> Typed {
        Typed { slots: std::array::from_fn(|_| TypeLang::Excluded) }
    }

    pub(crate) fn slot(&self, t: JsonType) -> &TypeLang {
        &self.slots[t as usize]
    }

    pub(crate) fn set(&mut self, t: JsonType, lang: TypeLang) {
        self.slots[t as usize] = lang;
    }

    /// Whether the type can still occur (anything but `Excluded`).
    pub(crate) fn admits(&self, t: JsonType) -> bool {
        !matches!(self.slot(t), TypeLang::Excluded)
    }
}

/// Set operations on regular languages, through DFAs with a state limit.
pub(crate) trait Products {
    fn dfa(&mut self, re: &Re) -> Result<Arc<ByteDfa>, Diagnostic>;
    fn product(&mut self, a: &ByteDfa, b: &ByteDfa, op: Op) -> Result<ByteDfa, Diagnostic>;
    /// The language of every value of a regular type.
    fn universe(&mut self, t: JsonType) -> Option<Re>;
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    Intersect,
    Difference,
}

fn lang_of(dfa: ByteDfa) -> TypeLang {
    if dfa.is_empty_language() {
        TypeLang::Excluded
    } else {
        TypeLang::Lang(Re::Dfa(Arc::new(dfa)))
    }
}

pub(crate) fn intersect(p: &mut impl Products, a: &TypeLang, b: &TypeLang) -> Result<TypeLang, Diagnostic> {
    Ok(match (a, b) {
        (TypeLang::Excluded, _) | (_, TypeLang::Excluded) => TypeLang::Excluded,
        (TypeLang::Any, x) | (x, TypeLang::Any) => x.clone(),
        (TypeLang::Unsupported(d), _) | (_, TypeLang::Unsupported(d)) => TypeLang::Unsupported(d.clone()),
        (TypeLang::Lang(x), TypeLang::Lang(y)) => {
            let (x, y) = (p.dfa(x)?, p.dfa(y)?);
            lang_of(p.product(&x, &y, Op::Intersect)?)
        }
    })
}

pub(crate) fn union(a: &TypeLang, b: &TypeLang) -> TypeLang {
    match (a, b) {
        (TypeLang::Excluded, x) | (x, TypeLang::Excluded) => x.clone(),
        (TypeLang::Any, _) | (_, TypeLang::Any) => TypeLang::Any,
        (TypeLang::Unsupported(d), _) | (_, TypeLang::Unsupported(d)) => TypeLang::Unsupported(d.clone()),
        (TypeLang::Lang(x), TypeLang::Lang(y)) => TypeLang::Lang(Re::alt(vec![x.clone(), y.clone()])),
    }
}

/// `a` minus `b`, for one type `t`.
pub(crate) fn difference(
    p: &mut impl Products,
    t: JsonType,
    a: &TypeLang,
    b: &TypeLang,
    unsupported: impl FnOnce() -> Diagnostic,
) -> Result<TypeLang, Diagnostic> {
    Ok(match (a, b) {
        (TypeLang::Excluded, _) | (_, TypeLang::Any) => TypeLang::Excluded,
        (x, TypeLang::Excluded) => x.clone(),
        (TypeLang::Unsupported(d), _) | (_, TypeLang::Unsupported(d)) => TypeLang::Unsupported(d.clone()),
        (TypeLang::Any, TypeLang::Lang(y)) => match p.universe(t) {
            Some(universe) => {
                let (x, y) = (p.dfa(&universe)?, p.dfa(y)?);
                lang_of(p.product(&x, &y, Op::Difference)?)
            }
            None => TypeLang::Unsupported(unsupported()),
        },
        (TypeLang::Lang(x), TypeLang::Lang(y)) => {
            let (x, y) = (p.dfa(x)?, p.dfa(y)?);
            lang_of(p.product(&x, &y, Op::Difference)?)
        }
    })
}

pub(crate) fn intersect_typed(p: &mut impl Products, a: &Typed, b: &Typed) -> Result<Typed, Diagnostic> {
    let mut out = Typed::nothing();
    for t in JsonType::ALL {
        out.set(t, intersect(p, a.slot(t), b.slot(t))?);
    }
    Ok(out)
}

pub(crate) fn union_typed(a: &Typed, b: &Typed) -> Typed {
    let mut out = Typed::nothing();
    for t in JsonType::ALL {
        out.set(t, union(a.slot(t), b.slot(t)));
    }
    out
}

pub(crate) fn difference_typed(
    p: &mut impl Products,
    a: &Typed,
    b: &Typed,
    unsupported: impl Fn(JsonType) -> Diagnostic,
) -> Result<Typed, Diagnostic> {
    let mut out = Typed::nothing();
    for t in JsonType::ALL {
        out.set(t, difference(p, t, a.slot(t), b.slot(t), || unsupported(t))?);
    }
    Ok(out)
}
