//! `maskforge._native`: the PyO3 bindings of maskforge-core. The Python package `maskforge`
//! re-exports these classes; `maskforge.errors` defines the exceptions they raise.

mod args;
mod batch;
mod buffer;
mod compiler;
mod errors;
mod session;
mod vocabulary;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Compilation builds and drops many small automata, tables and maps; mimalloc serves them
/// faster than the system allocator (about a quarter off the compile time of the median
/// SchemaStore schema, masks unchanged). The extension is a final artifact, so it may choose;
/// maskforge-core, a library, leaves the choice to its users.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Counters of the process-wide executable cache.
#[pyfunction]
fn executable_cache_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    compiler::executable_cache_stats(py)
}

/// Empties the process-wide executable cache.
#[pyfunction]
fn clear_executable_cache() {
    maskforge_core::runtime::clear_global_executable_cache();
}

/// A compiler with the options of `compiler` over the process-wide executable cache.
#[pyfunction]
fn process_cache_compiler(compiler: &compiler::PyCompiler) -> compiler::PyCompiler {
    compiler.over_process_cache()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<vocabulary::PyVocabulary>()?;
    m.add_class::<compiler::PyCompiler>()?;
    m.add_class::<compiler::PySchemaProgram>()?;
    m.add_class::<compiler::PyBoundSchema>()?;
    m.add_class::<session::PySession>()?;
    m.add_function(wrap_pyfunction!(batch::fill_masks, m)?)?;
    m.add_function(wrap_pyfunction!(batch::advance_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::rollback_batch, m)?)?;
    m.add_function(wrap_pyfunction!(executable_cache_stats, m)?)?;
    m.add_function(wrap_pyfunction!(clear_executable_cache, m)?)?;
    m.add_function(wrap_pyfunction!(process_cache_compiler, m)?)?;
    Ok(())
}
