//! Resource limits that keep a hostile schema to bounded time and memory.

/// Bounds on the work one compilation may do. Exceeding one is a
/// [`DiagnosticCode::ResourceLimit`](crate::DiagnosticCode::ResourceLimit) diagnostic, never a
/// truncated language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SchemaResourceLimits {
    /// Size of the schema text, in bytes.
    pub max_document_bytes: usize,
    /// Total bytes of every resolved document (the root and its references).
    pub max_resolved_bytes: usize,
    /// States of one deterministic automaton.
    pub max_dfa_states: usize,
    /// States of the nondeterministic automaton a schema expands to before determinisation.
    pub max_nfa_states: usize,
    /// Nesting depth of the schema document.
    pub max_nesting_depth: usize,
    /// Size of the structured backend's schema graph: its nodes plus the object and array
    /// shapes, named properties, array prefix items and number alternatives they hold.
    /// Complements and products of alternatives
    /// grow it; the default keeps it to a few hundred MB.
    pub max_graph_size: usize,
    /// Largest automaton, as estimated before it is built, for the members of a closed object
    /// in any order on the regular arm: their product grows as `2^members` times the values'
    /// sizes, and building a large one takes seconds. Above it the regular arm declines the
    /// schema and the structured arm reads the object, exactly, with masks computed per step.
    pub max_any_order_states: usize,
    /// Deterministic states the regular arm may build for one automaton of a schema, before
    /// minimisation (the nondeterministic automaton it determinises may have ten times as
    /// many). Determinising costs microseconds per state, so this bounds the time a schema
    /// spends on the regular arm; above it the arm declines and the structured arm reads the
    /// schema, exactly, with masks computed per step. The default (2,000) keeps the regular
    /// arm to schemas it compiles in a few milliseconds: the nested closed objects of larger
    /// automata took 20-300 ms to determinise, where the structured arm compiles them in about
    /// one and its masks stay within a few microseconds at the median. `max_dfa_states` and
    /// `max_nfa_states` still apply when smaller.
    pub max_regular_states: usize,
    /// States of a string automaton with a length bound (up to 256) unrolled into a pattern's
    /// or format's automaton, as estimated before it is built (the pattern's states times the
    /// bound). Above it the bound is counted beside the pattern's automaton instead, on the
    /// structured arm, exactly: unrolling `maxLength: 200` into a pattern of a few thousand
    /// states would take seconds, and into one of twenty states some 40 ms (the default, 1,000,
    /// counts both).
    pub max_length_product_states: usize,
}

impl Default for SchemaResourceLimits {
    fn default() -> Self {
        SchemaResourceLimits {
            max_document_bytes: 16 << 20,
            max_resolved_bytes: 64 << 20,
            max_dfa_states: 200_000,
            max_nfa_states: 2_000_000,
            max_nesting_depth: 256,
            max_graph_size: 2_000_000,
            max_any_order_states: 20_000,
            max_regular_states: 2_000,
            max_length_product_states: 1_000,
        }
    }
}
