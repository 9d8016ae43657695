//! A program as bytes: what [`SchemaProgram::to_bytes`](crate::SchemaProgram::to_bytes)
//! writes and [`Compiler::load_program`](crate::Compiler::load_program) reads, so that one
//! process compiles and many bind.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! magic "MFPROG\r\n" | format u32 | CRC-32 of what follows u32 | header length u32 | header | body
//! ```
//!
//! The header is a JSON object: the MaskForge version that wrote it, the backend, the output
//! kind and, on the structured and composite arms, the program's source (schema or template
//! document, the registry's documents, the compile options that shape the language). The body
//! is the regular arm's automaton table. Only the version that wrote the bytes reads them: a
//! program is the code that compiled it as much as its input, so another version compiles it
//! again rather than trust a table it might read otherwise. The magic's `\r\n` catches a file
//! mangled by a text-mode copy; the checksum catches the rest of the damage that leaves the
//! layout intact, and the table is checked again on reading ([`ByteDfa::read_table`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::automata::ByteDfa;
use crate::error::{Error, LoadError, Result};
use crate::executable::{Backend, ExecutableSchema, Output, SourceKind};
use crate::options::CompileIdentity;
use crate::registry::{MapRegistry, Registry};
use crate::schema::SchemaDocument;

const MAGIC: &[u8; 8] = b"MFPROG\r\n";
/// The layout's version; a change of layout is also a change of MaskForge version.
const FORMAT: u32 = 1;
const VERSION: &str = env!("CARGO_PKG_VERSION");

pub(crate) fn write(executable: &ExecutableSchema) -> Vec<u8> {
    let mut header = json!({
        "maskforge": VERSION,
        "backend": executable.backend_name(),
        "output": match executable.output() { Output::JsonValue => "json", Output::Text => "text" },
    });
    let mut body = Vec::new();
    match (executable.backend(), executable.source()) {
        (Backend::Regular(dfa), _) => dfa.write_table(&mut body),
        (_, Some(source)) => {
            header["source"] = json!({
                "kind": match source.kind { SourceKind::Schema => "schema", SourceKind::Template => "template" },
                "document": source.document,
                "remotes": source.remotes.iter().map(|(uri, text)| json!([uri, text])).collect::<Vec<_>>(),
                "options": source.identity.to_json(),
            });
        }
        (_, None) => unreachable!("structured and composite programs keep their source"),
    }
    let header = header.to_string().into_bytes();
    let mut rest = Vec::with_capacity(4 + header.len() + body.len());
    rest.extend_from_slice(&(header.len() as u32).to_le_bytes());
    rest.extend_from_slice(&header);
    rest.extend_from_slice(&body);
    let mut out = Vec::with_capacity(16 + rest.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&rest).to_le_bytes());
    out.extend_from_slice(&rest);
    out
}

pub(crate) fn read(bytes: &[u8]) -> Result<ExecutableSchema> {
    let damaged = |why: &str| Error::ProgramLoad(LoadError::Damaged(why.to_owned()));
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(Error::ProgramLoad(LoadError::NotAProgram));
    }
    let format = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if format != FORMAT {
        return Err(Error::ProgramLoad(LoadError::Version {
            found: format!("with program format {format}"),
            expected: format!("{VERSION} (program format {FORMAT})"),
        }));
    }
    let checksum = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
    let rest = &bytes[16..];
    if crc32fast::hash(rest) != checksum {
        return Err(damaged("checksum mismatch"));
    }
    let header_len = rest.get(..4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
    let (header, mut body) = match header_len {
        Some(n) if rest.len() >= 4 + n => (&rest[4..4 + n], &rest[4 + n..]),
        _ => return Err(damaged("truncated header")),
    };
    let header: Value = serde_json::from_slice(header).map_err(|_| damaged("header is not JSON"))?;
    let found = header["maskforge"].as_str().ok_or_else(|| damaged("header names no version"))?;
    if found != VERSION {
        return Err(Error::ProgramLoad(LoadError::Version { found: found.to_owned(), expected: VERSION.to_owned() }));
    }
    let output = match header["output"].as_str() {
        Some("json") => Output::JsonValue,
        Some("text") => Output::Text,
        _ => return Err(damaged("unknown output kind")),
    };
    let backend = header["backend"].as_str().ok_or_else(|| damaged("header names no backend"))?;
    let executable = if backend == "regular" {
        let dfa = ByteDfa::read_table(&mut body).map_err(|why| damaged(&why))?;
        if !body.is_empty() {
            return Err(damaged("bytes after the automaton"));
        }
        ExecutableSchema::regular(dfa, output)
    } else {
        rebuild(&header["source"]).map_err(|why| damaged(&why))?
    };
    if executable.backend_name() != backend || executable.output() != output {
        return Err(damaged("the source compiles to another program"));
    }
    Ok(executable)
}

/// Compiles a structured or composite program's source again, straight on its arm.
fn rebuild(source: &Value) -> Result<ExecutableSchema, String> {
    let identity = CompileIdentity::from_json(&source["options"]).ok_or("unreadable options")?;
    let mut options = identity.options();
    let remotes = source["remotes"].as_array().ok_or("unreadable registry documents")?;
    if !remotes.is_empty() {
        let mut documents = HashMap::new();
        for entry in remotes {
            let (Some(uri), Some(text)) = (entry[0].as_str(), entry[1].as_str()) else {
                return Err("unreadable registry document".into());
            };
            documents.insert(uri.to_owned(), text.to_owned());
        }
        options.registry = Some(Registry(Arc::new(MapRegistry(documents))));
    }
    let document = source["document"].clone();
    let compiled = match source["kind"].as_str() {
        Some("schema") => SchemaDocument::from_value(document, &options)
            .and_then(|document| ExecutableSchema::compile_structured(&document, &options)),
        Some("template") => ExecutableSchema::compile_template(&document, &options),
        _ => return Err("unknown source kind".into()),
    };
    compiled.map_err(|e| format!("the source no longer compiles: {e}"))
}
