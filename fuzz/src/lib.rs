//! What every fuzz target shares: a counting global allocator that bounds the heap one execution
//! may hold, and the planted faults (a panic, an allocation beyond the bound, a hang) that show
//! each is caught (`scripts/fuzz.sh --self-check`, docs/testing.md "Fuzzing").
//!
//! The bound is the one `conformance/tests/integration/fuzz_decoders.rs` uses: no execution may
//! hold more than [`MAX_LIVE_BYTES`] of heap above what was live when it started. libFuzzer's own
//! `-malloc_limit_mb` needs a sanitizer's malloc hooks, which a `-s none` build lacks, so the
//! allocator checks it: the allocation that would cross the bound is refused with a message on
//! stderr and the process aborts, which libFuzzer reports as a crash and saves the input.
//! (libFuzzer's `-rss_limit_mb` still bounds the whole process.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The most heap one execution may hold above what was live before it: 256 MiB, as in
/// `fuzz_decoders`. A decoder of inputs of at most `-max_len` bytes (1 MiB in scripts/fuzz.sh)
/// that needs more has an amplification worth a look.
pub const MAX_LIVE_BYTES: usize = 256 << 20;

/// Live heap bytes (Rust allocations only; libFuzzer's own are C++ and not counted).
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// What was live when the current execution started; `usize::MAX` outside an execution.
static BASE: AtomicUsize = AtomicUsize::new(usize::MAX);
static REPORTING: AtomicBool = AtomicBool::new(false);

/// The counting allocator; every target installs it with `#[global_allocator]`.
pub struct Bounded;

unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        check(l.size());
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            LIVE.fetch_add(l.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        check(l.size());
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            LIVE.fetch_add(l.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        check(new_size.saturating_sub(l.size()));
        let q = unsafe { System.realloc(p, l, new_size) };
        if !q.is_null() {
            LIVE.fetch_add(new_size, Ordering::Relaxed);
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        }
        q
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

/// Aborts, before allocating, when `more` bytes would take the current execution past the bound.
#[inline]
fn check(more: usize) {
    let base = BASE.load(Ordering::Relaxed);
    if base == usize::MAX {
        return;
    }
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    if held.saturating_add(more) > MAX_LIVE_BYTES && !REPORTING.swap(true, Ordering::Relaxed) {
        // No allocation from here on: a fixed message and the numbers, written unbuffered.
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "==rebalance-fuzz== allocation bound exceeded: this execution holds {held} bytes and \
             asks for {more} more, beyond MAX_LIVE_BYTES = {MAX_LIVE_BYTES} (fuzz/src/lib.rs)"
        );
        drop(err);
        std::process::abort();
    }
}

/// A fault planted for the self-check, chosen by `REBALANCE_FUZZ_PLANT` (unset: none). It fires
/// only on an input that starts with [`PLANT_MARKER`], so that the fuzzer finds it from a seed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plant {
    None,
    Panic,
    Alloc,
    Hang,
}

/// The input prefix a planted fault fires on.
pub const PLANT_MARKER: &[u8] = b"PLANTED-FAULT";

fn plant() -> Plant {
    static PLANT: OnceLock<Plant> = OnceLock::new();
    *PLANT.get_or_init(|| match std::env::var("REBALANCE_FUZZ_PLANT").as_deref() {
        Err(_) | Ok("") => Plant::None,
        Ok("panic") => Plant::Panic,
        Ok("alloc") => Plant::Alloc,
        Ok("hang") => Plant::Hang,
        Ok(other) => {
            eprintln!("REBALANCE_FUZZ_PLANT={other}: expected `panic`, `alloc` or `hang`");
            std::process::exit(2)
        }
    })
}

/// Runs one execution of a target on `data` under the allocation bound.
pub fn execute(data: &[u8], target: impl FnOnce(&[u8])) {
    let planted = plant();
    BASE.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    if planted != Plant::None && data.starts_with(PLANT_MARKER) {
        match planted {
            Plant::Panic => panic!("a planted panic (REBALANCE_FUZZ_PLANT=panic)"),
            Plant::Alloc => {
                let v = vec![1u8; MAX_LIVE_BYTES + 1];
                std::hint::black_box(&v);
            }
            Plant::Hang => loop {
                std::thread::sleep(std::time::Duration::from_millis(100));
            },
            Plant::None => {}
        }
    }
    target(data);
    BASE.store(usize::MAX, Ordering::Relaxed);
}

/// The input as text, as the decoders take it: invalid UTF-8 replaced, as
/// `fuzz_decoders` does, so that every input reaches the JSON parser.
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// A directory for the file-store targets, reused by every execution of a process:
/// `REBALANCE_FUZZ_SCRATCH` (scripts/fuzz.sh sets it and removes it afterwards), else one in
/// memory (`/dev/shm`) where the machine has it, as `fuzz_decoders` does.
pub fn scratch_dir() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("REBALANCE_FUZZ_SCRATCH") {
            return std::path::PathBuf::from(dir).join(format!("{}", std::process::id()));
        }
        let base = std::path::Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        base.join(format!("rebalance-fuzz-{}", std::process::id()))
    })
}

/// Opens a file store made of `snapshot` and `journal` (`journal.0.log`, the generation of the
/// shipped snapshot seed) from disk, as a host does; the result is ignored, a panic is not.
pub fn open_file_store(snapshot: &[u8], journal: &[u8]) {
    use rebalance_stores::{FileStore, FileStoreOptions};
    let dir = scratch_dir();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("the scratch directory");
    std::fs::write(dir.join("snapshot.json"), snapshot).expect("write the snapshot");
    std::fs::write(dir.join("journal.0.log"), journal).expect("write the journal");
    let options = FileStoreOptions {
        fsync: false,
        ..FileStoreOptions::default()
    };
    let _ = FileStore::open(dir, options);
}

/// `journal` with each line's checksum made right: a leading `<8 hex digits> ` is dropped and
/// the CRC-32 of the rest written in front, as the store writes it. A mutated record almost
/// never carries a matching checksum, so without this the journal target stops at the checksum
/// and seldom reaches the record's JSON decoder (`file_store_records` fuzzes past it).
pub fn with_record_checksums(journal: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(journal.len() + 16);
    let lines: Vec<&[u8]> = journal.split(|&b| b == b'\n').collect();
    for (i, line) in lines.iter().enumerate() {
        // After a final newline, nothing: no record. A last line without one stays without
        // one, a torn tail as a crash leaves it.
        let last = i + 1 == lines.len();
        if last && line.is_empty() {
            break;
        }
        let has_prefix =
            line.len() >= 9 && line[..8].iter().all(u8::is_ascii_hexdigit) && line[8] == b' ';
        let json = if has_prefix { &line[9..] } else { line };
        let crc = rebalance_stores::crc32::crc32(json);
        out.extend_from_slice(format!("{crc:08x} ").as_bytes());
        out.extend_from_slice(json);
        if !last {
            out.push(b'\n');
        }
    }
    out
}

/// A snapshot file around `body`: the header line with generation 0 and the body's true length
/// and CRC-32, so that the body's JSON decoder is reached (`file_store_body`).
pub fn snapshot_of_body(body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{{\"format\":\"fluss-rebalance-store\",\"version\":1,\"generation\":0,\"body_len\":{},\
         \"body_crc32\":{}}}\n",
        body.len(),
        rebalance_stores::crc32::crc32(body)
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}
