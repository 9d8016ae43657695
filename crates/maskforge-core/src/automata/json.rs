//! JSON lexical fragments.
