//! `FileStore`: the durable embedded adapter.
//!
//! # Format (version 1)
//! A directory with two files (and an empty `LOCK` file, locked while a `FileStore` is open):
//! - `snapshot.json`: a header line `{"format":"fluss-rebalance-store","version":1,
//!   "generation":G,"body_len":N,"body_crc32":C}` followed by the body, the JSON of
//!   [`PersistedState`] (exactly `N` bytes, CRC-32 `C`). Written to `snapshot.json.tmp`,
//!   fsynced, renamed, and the directory fsynced.
//! - `journal.G.log`: one record per line, `<crc32 as 8 hex digits> <json>\n`; the first record
//!   is `{"op":"header","version":1,"generation":G}`, the others are the writes since snapshot
//!   `G` (`epoch`, `task`, `task_status`, `bucket`, `deleted`). A write appends one record and
//!   fsyncs before it returns success, so a bucket write costs O(record), not O(plan).
//!
//! When the journal outgrows `max(compact_min_bytes, snapshot size)` it is compacted into
//! snapshot `G+1` (amortised O(1) per write): new snapshot to a temp file, new journal
//! `G+1` (header only) created and renamed, then the snapshot renamed over the old one, the
//! directory fsynced and journal `G` removed. A crash at any point leaves either (snapshot G,
//! journal G) or (snapshot G+1, journal G+1); stray files of other generations are removed at
//! open.
//!
//! # Torn-tail rule
//! A write that did not return success may have left an incomplete final record: the bytes after
//! the last `\n` of the journal. That record is a write that never returned success, so open
//! discards it (truncating the file) and reports its size in
//! [`FileStore::torn_tail_discarded`]; with [`FileStoreOptions::strict_torn_tail`] open fails
//! with [`FileStoreError::TornTail`] instead. Anything else that does not verify (a complete
//! record with a bad checksum or bad JSON, a record in the middle, a tail that is not the
//! start of a record, a truncated or damaged snapshot) is [`FileStoreError::Corrupt`], with
//! the line or byte offset; an unknown version is
//! [`FileStoreError::UnsupportedVersion`]. Open never panics and never silently resets.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use rebalance_manager::store::batch::{BatchStore, BatchedWrite};
use rebalance_manager::store::{ClusterState, PersistedState, Store, StoreError};
use rebalance_manager::{BucketId, BucketRecord, Epoch, RebalanceId, TaskNode, TaskStatus};

use crate::crc32::crc32;
use crate::header::{check_header, HeaderFault};

const FORMAT: &str = "fluss-rebalance-store";
const VERSION: u64 = 1;
const SNAPSHOT: &str = "snapshot.json";
const SNAPSHOT_TMP: &str = "snapshot.json.tmp";
const LOCK: &str = "LOCK";

/// Tuning of a [`FileStore`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStoreOptions {
    /// fsync every write before it returns success, and every snapshot, journal and directory
    /// change. Turning it off gives up crash safety: for tests and benchmarks only.
    pub fsync: bool,
    /// Compact when the journal exceeds max(this, snapshot size) bytes.
    pub compact_min_bytes: u64,
    /// Fail open with [`FileStoreError::TornTail`] instead of discarding an incomplete final
    /// journal record.
    pub strict_torn_tail: bool,
}

impl Default for FileStoreOptions {
    fn default() -> Self {
        FileStoreOptions {
            fsync: true,
            compact_min_bytes: 4 << 20,
            strict_torn_tail: false,
        }
    }
}

/// Why a [`FileStore`] could not be opened or created.
#[derive(Debug, thiserror::Error)]
pub enum FileStoreError {
    /// No store in the directory.
    #[error("no store in {0}")]
    NotFound(PathBuf),
    /// `create` on a directory that already holds store files.
    #[error("a store already exists in {0}")]
    AlreadyExists(PathBuf),
    /// The store's path is a file, not a directory.
    #[error("store path {0} is not a directory")]
    NotADirectory(PathBuf),
    /// Another `FileStore` (in this or another process) holds the directory's lock.
    #[error("store {0} is locked by another FileStore")]
    Locked(PathBuf),
    /// A journal exists without its snapshot: files were lost; refusing to start empty.
    #[error("journal without snapshot in {0}: refusing to start from an empty state")]
    MissingSnapshot(PathBuf),
    /// A file does not verify (checksum, length, JSON, record order).
    #[error("corrupt store file {file}: {detail}")]
    Corrupt {
        /// The file.
        file: PathBuf,
        /// What failed to verify, with the line or offset.
        detail: String,
    },
    /// A file of a format version this build does not know.
    #[error(
        "store file {file} has unsupported format version {version} (this build reads {VERSION})"
    )]
    UnsupportedVersion {
        /// The file.
        file: PathBuf,
        /// The version found.
        version: u64,
    },
    /// The journal ends in an incomplete record (only with `strict_torn_tail`).
    #[error("journal {file} ends in an incomplete record of {bytes} bytes at offset {offset}")]
    TornTail {
        /// The journal.
        file: PathBuf,
        /// Where the incomplete record starts.
        offset: u64,
        /// Its length.
        bytes: u64,
    },
    /// The file system failed.
    #[error("I/O on {file}: {source}")]
    Io {
        /// The file or directory.
        file: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

fn io_err(file: &Path) -> impl FnOnce(io::Error) -> FileStoreError + '_ {
    move |source| FileStoreError::Io {
        file: file.to_path_buf(),
        source,
    }
}

/// One journal record.
#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Record {
    Header {
        version: u64,
        generation: u64,
    },
    Epoch {
        epoch: Epoch,
    },
    Task {
        task: TaskNode,
    },
    /// A task write that keeps the stored plan (cancel, finalize): O(1) instead of O(plan).
    TaskStatus {
        id: RebalanceId,
        status: TaskStatus,
        cancel_requested: bool,
    },
    Bucket {
        bucket: BucketId,
        record: BucketRecord,
    },
    Deleted {
        bucket: BucketId,
    },
}

#[derive(Serialize, Deserialize)]
struct SnapshotHeader {
    format: String,
    version: u64,
    generation: u64,
    body_len: u64,
    body_crc32: u32,
}

/// The durable store. One `FileStore` owns a directory at a time: it holds an exclusive lock on
/// `dir/LOCK` while open (a second open fails with [`FileStoreError::Locked`]); the epoch fence of
/// D7 guards the writes of a deposed coordinator that reopens it later.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    _lock: File,
    options: FileStoreOptions,
    state: PersistedState,
    generation: u64,
    journal: File,
    journal_bytes: u64,
    snapshot_bytes: u64,
    poisoned: Option<String>,
    /// A failed append could not be cut back: the journal may hold the write the core was told
    /// failed ([`BatchStore::in_doubt`]).
    in_doubt: bool,
    torn_tail: Option<u64>,
}

fn journal_name(generation: u64) -> String {
    format!("journal.{generation}.log")
}

fn encode(rec: &Record) -> Vec<u8> {
    let json = serde_json::to_vec(rec).expect("journal records always serialize");
    let mut line = format!("{:08x} ", crc32(&json)).into_bytes();
    line.extend_from_slice(&json);
    line.push(b'\n');
    line
}

fn sync_dir(dir: &Path, sync: bool) -> io::Result<()> {
    if sync {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Takes the directory's exclusive lock (released when the returned file is dropped).
fn lock_dir(dir: &Path) -> Result<File, FileStoreError> {
    let path = dir.join(LOCK);
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err(&path))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(fs::TryLockError::WouldBlock) => Err(FileStoreError::Locked(dir.to_path_buf())),
        Err(fs::TryLockError::Error(e)) => Err(FileStoreError::Io {
            file: path,
            source: e,
        }),
    }
}

fn is_store_file(name: &str) -> bool {
    name == SNAPSHOT
        || name == SNAPSHOT_TMP
        || (name.starts_with("journal.") && name.contains(".log"))
}

impl FileStore {
    /// Create a new store in `dir` (created if absent) holding `initial` (environment setup:
    /// the initial cluster). Fails if `dir` already holds a store.
    pub fn create(
        dir: impl AsRef<Path>,
        initial: PersistedState,
        options: FileStoreOptions,
    ) -> Result<Self, FileStoreError> {
        let dir = dir.as_ref().to_path_buf();
        not_a_file(&dir)?;
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let lock = lock_dir(&dir)?;
        for entry in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            if is_store_file(&entry.file_name().to_string_lossy()) {
                return Err(FileStoreError::AlreadyExists(dir));
            }
        }
        let journal_path = dir.join(journal_name(0));
        write_new_journal(&dir, 0, options.fsync)?;
        let snapshot_bytes = match write_snapshot(&dir, 0, &initial, options.fsync) {
            Ok(n) => n,
            Err(e) => {
                // Leave no journal without a snapshot behind: a failed create changes nothing.
                let _ = fs::remove_file(dir.join(journal_name(0)));
                let _ = fs::remove_file(dir.join(SNAPSHOT_TMP));
                return Err(e);
            }
        };
        let journal = OpenOptions::new()
            .append(true)
            .open(&journal_path)
            .map_err(io_err(&journal_path))?;
        let journal_bytes = journal.metadata().map_err(io_err(&journal_path))?.len();
        Ok(FileStore {
            dir,
            _lock: lock,
            options,
            state: initial,
            generation: 0,
            journal,
            journal_bytes,
            snapshot_bytes,
            poisoned: None,
            in_doubt: false,
            torn_tail: None,
        })
    }

    /// Open the store in `dir`, or create an empty one if `dir` holds no store file at all.
    pub fn open_or_create(
        dir: impl AsRef<Path>,
        options: FileStoreOptions,
    ) -> Result<Self, FileStoreError> {
        match Self::open(dir.as_ref(), options.clone()) {
            Err(FileStoreError::NotFound(_)) => {
                Self::create(dir, PersistedState::default(), options)
            }
            other => other,
        }
    }

    /// Open an existing store: verify the snapshot, replay its journal (discarding a torn tail,
    /// see the module doc) and remove stray files of other generations.
    pub fn open(dir: impl AsRef<Path>, options: FileStoreOptions) -> Result<Self, FileStoreError> {
        let dir = dir.as_ref().to_path_buf();
        not_a_file(&dir)?;
        let snapshot_path = dir.join(SNAPSHOT);
        if !snapshot_path.exists() {
            let has_journal = fs::read_dir(&dir)
                .map(|rd| {
                    rd.flatten()
                        .any(|e| e.file_name().to_string_lossy().starts_with("journal."))
                })
                .unwrap_or(false);
            return Err(if has_journal {
                FileStoreError::MissingSnapshot(dir)
            } else {
                FileStoreError::NotFound(dir)
            });
        }
        let lock = lock_dir(&dir)?;
        let (generation, mut state, snapshot_bytes) = read_snapshot(&snapshot_path)?;
        let journal_path = dir.join(journal_name(generation));
        if !journal_path.exists() {
            // A crash between renaming snapshot G and creating journal G cannot happen (the
            // journal is created first), but an empty journal is the only sound reading.
            write_new_journal(&dir, generation, options.fsync)?;
        }
        let bytes = fs::read(&journal_path).map_err(io_err(&journal_path))?;
        let (good_len, torn) = replay(&journal_path, &bytes, generation, &mut state)?;
        if let Some(torn_bytes) = torn {
            if options.strict_torn_tail {
                return Err(FileStoreError::TornTail {
                    file: journal_path,
                    offset: good_len,
                    bytes: torn_bytes,
                });
            }
            let f = OpenOptions::new()
                .write(true)
                .open(&journal_path)
                .map_err(io_err(&journal_path))?;
            f.set_len(good_len).map_err(io_err(&journal_path))?;
            if options.fsync {
                f.sync_all().map_err(io_err(&journal_path))?;
            }
        }
        // Stray files: temp snapshot, journals of other generations.
        if let Ok(rd) = fs::read_dir(&dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if is_store_file(&name) && name != SNAPSHOT && name != journal_name(generation) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        let mut journal = OpenOptions::new()
            .append(true)
            .open(&journal_path)
            .map_err(io_err(&journal_path))?;
        journal
            .seek(SeekFrom::End(0))
            .map_err(io_err(&journal_path))?;
        Ok(FileStore {
            dir,
            _lock: lock,
            options,
            state,
            generation,
            journal,
            journal_bytes: good_len,
            snapshot_bytes,
            poisoned: None,
            in_doubt: false,
            torn_tail: torn,
        })
    }

    /// Bytes of an incomplete final record discarded at open, if any (the torn-tail rule).
    pub fn torn_tail_discarded(&self) -> Option<u64> {
        self.torn_tail
    }

    /// The snapshot generation (raised by each compaction).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current journal's size in bytes.
    pub fn journal_bytes(&self) -> u64 {
        self.journal_bytes
    }

    /// Compact the journal into a new snapshot now.
    pub fn compact(&mut self) -> Result<(), StoreError> {
        self.check_usable()?;
        let next = self.generation + 1;
        // Until the snapshot rename, a failure leaves generation G intact.
        let staged = write_new_journal(&self.dir, next, self.options.fsync).and_then(|()| {
            write_snapshot_tmp(&self.dir, next, &self.state, self.options.fsync)
                .map_err(io_err(&self.dir.join(SNAPSHOT_TMP)))
        });
        let snapshot_bytes = match staged {
            Ok(n) => n,
            Err(e) => {
                let _ = fs::remove_file(self.dir.join(journal_name(next)));
                let _ = fs::remove_file(self.dir.join(SNAPSHOT_TMP));
                return Err(StoreError::Io(format!("compaction: {e}")));
            }
        };
        if let Err(e) = fs::rename(self.dir.join(SNAPSHOT_TMP), self.dir.join(SNAPSHOT)) {
            let _ = fs::remove_file(self.dir.join(journal_name(next)));
            return Err(StoreError::Io(format!("compaction rename: {e}")));
        }
        // From here generation G+1 may be what a restart sees: switch now or stop writing.
        let switched = sync_dir(&self.dir, self.options.fsync).and_then(|()| {
            let path = self.dir.join(journal_name(next));
            let journal = OpenOptions::new().append(true).open(&path)?;
            let len = journal.metadata()?.len();
            Ok((journal, len))
        });
        match switched {
            Ok((journal, len)) => {
                let old = self.dir.join(journal_name(self.generation));
                self.journal = journal;
                self.journal_bytes = len;
                self.generation = next;
                self.snapshot_bytes = snapshot_bytes;
                let _ = fs::remove_file(old);
                Ok(())
            }
            Err(e) => {
                let msg = format!("compaction switch to generation {next}: {e}");
                self.poisoned = Some(msg.clone());
                Err(StoreError::Poisoned(msg))
            }
        }
    }

    fn check_usable(&self) -> Result<(), StoreError> {
        match &self.poisoned {
            Some(p) => Err(StoreError::Poisoned(p.clone())),
            None => Ok(()),
        }
    }

    /// Append one record durably. On failure the journal is cut back to its previous length, so
    /// a failed write leaves nothing behind; if even that fails the store is poisoned.
    fn append(&mut self, rec: &Record) -> Result<(), StoreError> {
        self.check_usable()?;
        self.append_lines(&encode(rec))
    }

    /// Append encoded records (whole lines) with one write and one fsync: the group commit of
    /// `write_batch`. A crash before the fsync completes may leave a prefix of them, in order
    /// (and a torn tail); a failure reported here is undone as in [`FileStore::append`].
    fn append_lines(&mut self, line: &[u8]) -> Result<(), StoreError> {
        let written = self.journal.write_all(line);
        let synced = written.and_then(|()| {
            if self.options.fsync {
                self.journal.sync_data()
            } else {
                Ok(())
            }
        });
        if let Err(e) = synced {
            let undo = self
                .journal
                .set_len(self.journal_bytes)
                .and_then(|()| self.journal.sync_data());
            if let Err(e2) = undo {
                self.in_doubt = true;
                self.poisoned = Some(format!(
                    "journal append failed ({e}) and could not be undone ({e2})"
                ));
            }
            return Err(StoreError::Io(format!("journal append: {e}")));
        }
        self.journal_bytes += line.len() as u64;
        Ok(())
    }

    /// The journal record of a task write: status only when the stored task has the same plan
    /// (the same `Arc`: cancel and finalize never copy it), so a 1M-bucket plan is not journalled
    /// again.
    fn task_record(&self, task: &TaskNode) -> Record {
        let same_plan = self
            .state
            .task
            .as_ref()
            .is_some_and(|t| t.id == task.id && Arc::ptr_eq(&t.plan, &task.plan));
        if same_plan {
            Record::TaskStatus {
                id: task.id,
                status: task.status,
                cancel_requested: task.cancel_requested,
            }
        } else {
            Record::Task { task: task.clone() }
        }
    }

    fn maybe_compact(&mut self) {
        if self.journal_bytes > self.options.compact_min_bytes.max(self.snapshot_bytes) {
            // The write already succeeded; a failed compaction is retried by the next write
            // (or has poisoned the store, which the next write reports).
            let _ = self.compact();
        }
    }
}

fn write_snapshot_bytes(generation: u64, state: &PersistedState) -> Vec<u8> {
    let body = serde_json::to_vec(state).expect("persisted state always serializes");
    let header = SnapshotHeader {
        format: FORMAT.to_string(),
        version: VERSION,
        generation,
        body_len: body.len() as u64,
        body_crc32: crc32(&body),
    };
    let mut out = serde_json::to_vec(&header).expect("header serializes");
    out.push(b'\n');
    out.extend_from_slice(&body);
    out
}

fn write_file_synced(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    if sync {
        f.sync_all()?;
    }
    Ok(())
}

/// Writes `snapshot.json.tmp` (fsynced); returns its size.
fn write_snapshot_tmp(
    dir: &Path,
    generation: u64,
    state: &PersistedState,
    sync: bool,
) -> io::Result<u64> {
    let bytes = write_snapshot_bytes(generation, state);
    write_file_synced(&dir.join(SNAPSHOT_TMP), &bytes, sync)?;
    Ok(bytes.len() as u64)
}

/// Temp file, fsync, rename, fsync the directory.
fn write_snapshot(
    dir: &Path,
    generation: u64,
    state: &PersistedState,
    sync: bool,
) -> Result<u64, FileStoreError> {
    let n = write_snapshot_tmp(dir, generation, state, sync)
        .map_err(io_err(&dir.join(SNAPSHOT_TMP)))?;
    fs::rename(dir.join(SNAPSHOT_TMP), dir.join(SNAPSHOT)).map_err(io_err(&dir.join(SNAPSHOT)))?;
    sync_dir(dir, sync).map_err(io_err(dir))?;
    Ok(n)
}

/// A journal holding only its header, created under a temp name and renamed.
fn write_new_journal(dir: &Path, generation: u64, sync: bool) -> Result<(), FileStoreError> {
    let tmp = dir.join(format!("{}.tmp", journal_name(generation)));
    let path = dir.join(journal_name(generation));
    write_file_synced(
        &tmp,
        &encode(&Record::Header {
            version: VERSION,
            generation,
        }),
        sync,
    )
    .map_err(io_err(&tmp))?;
    fs::rename(&tmp, &path).map_err(io_err(&path))?;
    sync_dir(dir, sync).map_err(io_err(dir))
}

impl From<FileStoreError> for StoreError {
    fn from(e: FileStoreError) -> Self {
        StoreError::Io(e.to_string())
    }
}

fn read_snapshot(path: &Path) -> Result<(u64, PersistedState, u64), FileStoreError> {
    let corrupt = |detail: String| FileStoreError::Corrupt {
        file: path.to_path_buf(),
        detail,
    };
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(io_err(path))?;
    let Some(nl) = bytes.iter().position(|&c| c == b'\n') else {
        return Err(corrupt("no header line (truncated snapshot)".into()));
    };
    let header: serde_json::Value = serde_json::from_slice(&bytes[..nl])
        .map_err(|e| corrupt(format!("header is not JSON: {e}")))?;
    match check_header(&header, FORMAT, VERSION) {
        Ok(()) => {}
        Err(HeaderFault::NotOurs) => {
            return Err(corrupt(
                "not a rebalance store snapshot (format field)".into(),
            ))
        }
        Err(HeaderFault::NoVersion) => return Err(corrupt("header has no version".into())),
        Err(HeaderFault::Unsupported(version)) => {
            return Err(FileStoreError::UnsupportedVersion {
                file: path.to_path_buf(),
                version,
            })
        }
    }
    let header: SnapshotHeader =
        serde_json::from_value(header).map_err(|e| corrupt(format!("header: {e}")))?;
    let body = &bytes[nl + 1..];
    if body.len() as u64 != header.body_len {
        return Err(corrupt(format!(
            "body is {} bytes, header says {}",
            body.len(),
            header.body_len
        )));
    }
    if crc32(body) != header.body_crc32 {
        return Err(corrupt("body checksum mismatch".into()));
    }
    let state: PersistedState =
        serde_json::from_slice(body).map_err(|e| corrupt(format!("body: {e}")))?;
    Ok((header.generation, state, bytes.len() as u64))
}

/// Refuses a store path that names something other than a directory (a regular file, say),
/// which would otherwise surface as an I/O error about creating it.
fn not_a_file(dir: &Path) -> Result<(), FileStoreError> {
    match fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(FileStoreError::NotADirectory(dir.to_path_buf())),
        _ => Ok(()),
    }
}

/// Whether `tail`, the bytes after the journal's last newline, can be what a write that died
/// left: the start of a record line (`<crc32 as 8 lowercase hex digits> <json>`), the JSON
/// object cut short or whole but for its newline. Anything else was not written by this store.
fn torn_record(tail: &[u8]) -> bool {
    let hex = tail.len().min(8);
    if !tail[..hex]
        .iter()
        .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    {
        return false;
    }
    match tail.get(8) {
        None => return true,
        Some(b' ') => {}
        Some(_) => return false,
    }
    let json = &tail[9..];
    if json.is_empty() {
        return true;
    }
    json[0] == b'{'
        && match serde_json::from_slice::<serde_json::Value>(json) {
            Ok(_) => true,
            Err(e) => e.is_eof(),
        }
}

/// Replays journal `bytes` onto `state`. Returns the length of the verified prefix and the size
/// of a torn tail, if any.
fn replay(
    path: &Path,
    bytes: &[u8],
    generation: u64,
    state: &mut PersistedState,
) -> Result<(u64, Option<u64>), FileStoreError> {
    let corrupt = |line: usize, detail: String| FileStoreError::Corrupt {
        file: path.to_path_buf(),
        detail: format!("record {line}: {detail}"),
    };
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        let Some(len) = bytes[offset..].iter().position(|&c| c == b'\n') else {
            // The torn-tail rule: an incomplete final record never returned success. Bytes
            // that are not the start of a record were not written by a store write.
            if !torn_record(&bytes[offset..]) {
                return Err(FileStoreError::Corrupt {
                    file: path.to_path_buf(),
                    detail: format!(
                        "{} bytes at offset {offset} after the last record are not a record cut \
                         short",
                        bytes.len() - offset
                    ),
                });
            }
            return Ok((offset as u64, Some((bytes.len() - offset) as u64)));
        };
        let line = &bytes[offset..offset + len];
        line_no += 1;
        if line.len() < 10 || line[8] != b' ' {
            return Err(corrupt(line_no, "malformed record framing".into()));
        }
        let crc = std::str::from_utf8(&line[..8])
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| corrupt(line_no, "bad checksum field".into()))?;
        let json = &line[9..];
        if crc32(json) != crc {
            return Err(corrupt(line_no, "checksum mismatch".into()));
        }
        if line_no == 1 {
            let v: serde_json::Value =
                serde_json::from_slice(json).map_err(|e| corrupt(line_no, e.to_string()))?;
            let version = v.get("version").and_then(|x| x.as_u64());
            if v.get("op").and_then(|x| x.as_str()) != Some("header") || version.is_none() {
                return Err(corrupt(line_no, "first record is not a header".into()));
            }
            if version != Some(VERSION) {
                return Err(FileStoreError::UnsupportedVersion {
                    file: path.to_path_buf(),
                    version: version.unwrap_or(0),
                });
            }
        }
        let rec: Record =
            serde_json::from_slice(json).map_err(|e| corrupt(line_no, e.to_string()))?;
        match rec {
            Record::Header { generation: g, .. } => {
                if line_no != 1 || g != generation {
                    return Err(corrupt(
                        line_no,
                        format!("header of generation {g} where {generation} expected"),
                    ));
                }
            }
            _ if line_no == 1 => {
                return Err(corrupt(line_no, "first record is not a header".into()))
            }
            Record::Epoch { epoch } => state.coordinator_epoch = epoch,
            Record::Task { task } => state.task = Some(task),
            Record::TaskStatus {
                id,
                status,
                cancel_requested,
            } => match &mut state.task {
                Some(t) if t.id == id => {
                    t.status = status;
                    t.cancel_requested = cancel_requested;
                }
                _ => {
                    return Err(corrupt(
                        line_no,
                        format!("status update for task {id} that is not stored"),
                    ))
                }
            },
            Record::Bucket { bucket, record } => {
                state.cluster.buckets.insert(bucket, record);
            }
            Record::Deleted { bucket } => {
                state.cluster.deleted.insert(bucket);
            }
        }
        offset += len + 1;
    }
    if line_no == 0 {
        return Err(corrupt(0, "empty journal (no header)".into()));
    }
    Ok((offset as u64, None))
}

impl Store for FileStore {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        let epoch = self.state.coordinator_epoch + 1;
        self.append(&Record::Epoch { epoch })?;
        self.state.coordinator_epoch = epoch;
        self.maybe_compact();
        Ok(epoch)
    }

    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.check_usable()?;
        Ok(self.state.cluster.clone())
    }

    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.check_usable()?;
        Ok(self.state.task.clone())
    }

    fn write_task(&mut self, writer_epoch: Epoch, task: &TaskNode) -> Result<(), StoreError> {
        self.state.check_writer(writer_epoch)?;
        let rec = self.task_record(task);
        self.append(&rec)?;
        self.state.task = Some(task.clone());
        self.maybe_compact();
        Ok(())
    }

    fn write_bucket(
        &mut self,
        writer_epoch: Epoch,
        bucket: BucketId,
        record: &BucketRecord,
    ) -> Result<(), StoreError> {
        self.state.check_writer(writer_epoch)?;
        self.append(&Record::Bucket {
            bucket,
            record: record.clone(),
        })?;
        self.state.cluster.buckets.insert(bucket, record.clone());
        self.maybe_compact();
        Ok(())
    }

    fn mark_deleted(&mut self, writer_epoch: Epoch, bucket: BucketId) -> Result<(), StoreError> {
        self.state.check_writer(writer_epoch)?;
        self.append(&Record::Deleted { bucket })?;
        self.state.cluster.deleted.insert(bucket);
        self.maybe_compact();
        Ok(())
    }

    fn inspect(&self) -> Option<&PersistedState> {
        Some(&self.state)
    }
}

/// One journal append and one fsync for the whole batch: the records are those of the single
/// writes, in order (a task write of the stored plan is its status-only record), so the format
/// does not change and a journal cut inside a batch is read as a prefix of it.
impl BatchStore for FileStore {
    fn max_batch(&self) -> usize {
        usize::MAX
    }

    fn in_doubt(&self) -> bool {
        self.in_doubt
    }

    fn write_batch(
        &mut self,
        writer_epoch: Epoch,
        writes: &[BatchedWrite],
    ) -> Result<(), StoreError> {
        self.check_usable()?;
        self.state.check_writer(writer_epoch)?;
        let mut lines = Vec::new();
        for w in writes {
            let rec = match w {
                BatchedWrite::Task(task) => self.task_record(task),
                BatchedWrite::Bucket { bucket, record } => Record::Bucket {
                    bucket: *bucket,
                    record: record.clone(),
                },
            };
            lines.extend_from_slice(&encode(&rec));
        }
        self.append_lines(&lines)?;
        for w in writes {
            w.apply(&mut self.state);
        }
        self.maybe_compact();
        Ok(())
    }
}
