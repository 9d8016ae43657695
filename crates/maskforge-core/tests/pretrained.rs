//! `Vocabulary::from_pretrained` on a Hugging Face Hub cache laid out on disk, as
//! `huggingface_hub` leaves it: no network is touched.
#![cfg(feature = "huggingface-hub")]

use std::path::{Path, PathBuf};

use maskforge_core::{Error, PretrainedOptions, TokenizerJsonOptions, Vocabulary};

fn gpt2() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/tokenizers/gpt2.tokenizer.json")
}

/// A cache folder holding `tokenizer.json` of `acme/tiny` at `main` (commit `c0ffee`) and at the
/// tag `v1` (commit `beef`, a vocabulary with other EOS ids).
fn cache() -> PathBuf {
    let root = std::env::temp_dir().join(format!("maskforge-hub-cache-{}", std::process::id()));
    let repo = root.join("models--acme--tiny");
    for (reference, commit) in [("main", "c0ffee"), ("v1", "beef")] {
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs").join(reference), commit).unwrap();
        let snapshot = repo.join("snapshots").join(commit);
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::copy(gpt2(), snapshot.join("tokenizer.json")).unwrap();
    }
    root
}

#[test]
fn reads_the_cache_without_the_network() {
    let root = cache();
    let expected = Vocabulary::from_tokenizer_json_file(gpt2(), &TokenizerJsonOptions::default()).unwrap();
    let options = PretrainedOptions::default().with_cache_dir(&root).with_offline(true);
    assert_eq!(Vocabulary::from_pretrained("acme/tiny", &options).unwrap(), expected);

    // A revision, and the tokenizer options, are honoured.
    let widened = options
        .clone()
        .with_revision("v1")
        .with_tokenizer_options(TokenizerJsonOptions::default().with_mask_vocab_size(50_304));
    let vocabulary = Vocabulary::from_pretrained("acme/tiny", &widened).unwrap();
    assert_eq!((vocabulary.tokenizer_size(), vocabulary.mask_vocab_size()), (expected.tokenizer_size(), 50_304));

    // Missing from the cache while offline: a typed error naming the cache, nothing fetched.
    for (repo, revision) in [("acme/other", "main"), ("acme/tiny", "v2")] {
        let missing = options.clone().with_revision(revision);
        match Vocabulary::from_pretrained(repo, &missing) {
            Err(Error::Vocabulary(message)) => {
                assert!(message.contains(repo) && message.contains(&*root.to_string_lossy()), "{message}")
            }
            other => panic!("expected a vocabulary error, got {other:?}"),
        }
    }
    std::fs::remove_dir_all(root).unwrap();
}
