//! [`Vocabulary::from_pretrained`]: the `tokenizer.json` of a model on the Hugging Face Hub, read
//! from the local Hub cache when it is there (no network at all), else downloaded into it.

use std::path::PathBuf;

use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Cache, Repo, RepoType};

use super::{TokenizerJsonOptions, Vocabulary};
use crate::error::{Error, Result};

const TOKENIZER_FILE: &str = "tokenizer.json";

/// Options for [`Vocabulary::from_pretrained`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PretrainedOptions {
    /// Branch, tag or commit; `main` by default.
    pub revision: Option<String>,
    /// The Hub cache folder; by default `$HF_HOME/hub`, else `~/.cache/huggingface/hub`, as the
    /// `huggingface_hub` Python package lays it out (files it downloaded are found here too).
    pub cache_dir: Option<PathBuf>,
    /// Never download: a file missing from the cache is an error. By default, on when the
    /// `HF_HUB_OFFLINE` environment variable is `1` or `true`.
    pub offline: Option<bool>,
    /// An access token for gated or private models; by default the cache's stored token.
    pub token: Option<String>,
    /// How the file is read into a vocabulary (EOS ids, mask width).
    pub tokenizer: TokenizerJsonOptions,
}

impl PretrainedOptions {
    /// Sets [`revision`](Self::revision).
    pub fn with_revision(mut self, revision: impl Into<String>) -> Self {
        self.revision = Some(revision.into());
        self
    }

    /// Sets [`cache_dir`](Self::cache_dir).
    pub fn with_cache_dir(mut self, cache_dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(cache_dir.into());
        self
    }

    /// Sets [`offline`](Self::offline), overriding `HF_HUB_OFFLINE`.
    pub fn with_offline(mut self, offline: bool) -> Self {
        self.offline = Some(offline);
        self
    }

    /// Sets [`token`](Self::token).
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Sets [`tokenizer`](Self::tokenizer).
    pub fn with_tokenizer_options(mut self, tokenizer: TokenizerJsonOptions) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    fn is_offline(&self) -> bool {
        self.offline.unwrap_or_else(|| {
            std::env::var("HF_HUB_OFFLINE")
                .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true"))
        })
    }
}

impl Vocabulary {
    /// The vocabulary of a model on the Hugging Face Hub (`repo_id` such as
    /// `"HuggingFaceTB/SmolLM2-135M-Instruct"`), from its `tokenizer.json`: read from the Hub
    /// cache when present, else downloaded into it unless offline.
    ///
    /// ```no_run
    /// use maskforge_core::{PretrainedOptions, Vocabulary};
    ///
    /// let vocabulary = Vocabulary::from_pretrained("HuggingFaceTB/SmolLM2-135M-Instruct", &PretrainedOptions::default())?;
    /// assert!(vocabulary.tokenizer_size() > 0);
    /// # Ok::<(), maskforge_core::Error>(())
    /// ```
    pub fn from_pretrained(repo_id: &str, options: &PretrainedOptions) -> Result<Vocabulary> {
        let revision = options.revision.clone().unwrap_or_else(|| "main".to_owned());
        let repo = Repo::with_revision(repo_id.to_owned(), RepoType::Model, revision.clone());
        let cache = options.cache_dir.clone().map_or_else(Cache::from_env, Cache::new);
        let path = match cache.repo(repo.clone()).get(TOKENIZER_FILE) {
            Some(path) => path,
            None if options.is_offline() => {
                return Err(Error::Vocabulary(format!(
                "{repo_id}@{revision}: {TOKENIZER_FILE} is not in the Hugging Face cache at {} and downloads are off",
                cache.path().display()
            )))
            }
            None => {
                let mut builder = ApiBuilder::from_cache(cache).with_progress(false);
                if let Some(token) = &options.token {
                    builder = builder.with_token(Some(token.clone()));
                }
                let api = builder
                    .build()
                    .map_err(|e| Error::Vocabulary(format!("cannot reach the Hugging Face Hub: {e}")))?;
                api.repo(repo).get(TOKENIZER_FILE).map_err(|e| {
                    Error::Vocabulary(format!("{repo_id}@{revision}: cannot download {TOKENIZER_FILE}: {e}"))
                })?
            }
        };
        Vocabulary::from_tokenizer_json_file(path, &options.tokenizer)
    }
}
