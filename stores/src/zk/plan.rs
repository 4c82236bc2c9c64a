//! A task's plan as chunk nodes under `plans/`.
//!
//! A plan can be larger than ZooKeeper lets one request carry (`jute.maxbuffer`, 1 MiB by
//! default), so it is written as chunks of at most [`PLAN_CHUNK_BYTES`] under a new sequential
//! directory, and the task node holds only a [`PlanRef`] to them: the directory, the entry and
//! chunk counts and a CRC-32 of the chunks. A plan that does not verify on reading is refused as
//! corrupt. Each chunk is written by its own fenced create; the directory is new and the task
//! node is written after it, so a failed plan write leaves only an orphan directory, which
//! [`collect_plans`] removes later.

use zookeeper_client as zk;

use rebalance_manager::store::StoreError;
use rebalance_manager::{Epoch, Plan};

use crate::crc32::crc32;

use super::codec::{decode, encode, Paths, PlanChunk, PlanRef, PLAN_CHUNK_BYTES};
use super::error::Fail;
use super::fenced::{self, Op, WriteFail};
use super::layout::Layout;
use super::session::Session;

/// Splits `plan` into encoded chunks of at most [`PLAN_CHUNK_BYTES`] of entries each (an entry
/// larger than that gets a chunk of its own); an empty plan is one empty chunk.
fn encode_chunks(plan: &Plan) -> Vec<Vec<u8>> {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut current: PlanChunk = Vec::new();
    let mut current_bytes = 0usize;
    for entry in &plan.buckets {
        let size = serde_json::to_vec(entry).map(|v| v.len()).unwrap_or(0) + 1;
        if !current.is_empty() && current_bytes + size > PLAN_CHUNK_BYTES {
            chunks.push(encode(&current));
            current.clear();
            current_bytes = 0;
        }
        current.push(entry.clone());
        current_bytes += size;
    }
    if !current.is_empty() || chunks.is_empty() {
        chunks.push(encode(&current));
    }
    chunks
}

/// Writes `plan` as chunk nodes under a new sequential directory; returns a `PlanRef` to them.
pub(crate) fn write_plan(
    session: &mut Session,
    layout: &Layout,
    writer_epoch: Epoch,
    plan: &Plan,
) -> Result<PlanRef, StoreError> {
    let paths = &layout.paths;
    let chunks = encode_chunks(plan);
    let all: Vec<u8> = chunks.concat();
    let prefix = format!("{}/plan-", paths.plans());
    let ops = [Op::Create(
        &prefix,
        &[],
        zk::CreateMode::PersistentSequential,
    )];
    let dir = match fenced::write(session, layout, writer_epoch, &ops) {
        Ok(r) => match r.into_iter().next() {
            Some(zk::MultiWriteResult::Create { path, .. }) => path,
            other => {
                return Err(StoreError::Io(format!(
                    "unexpected answer to a create: {other:?}"
                )))
            }
        },
        // The check passed but the sequential create failed: the plans node is missing.
        Err(WriteFail::Op(e)) => {
            return Err(StoreError::Corrupt {
                node: paths.plans(),
                detail: e.to_string(),
            })
        }
        Err(f) => return Err(f.into_store_error(&prefix)),
    };
    let dir = dir.rsplit('/').next().unwrap_or_default().to_string();
    for (i, chunk) in chunks.iter().enumerate() {
        let path = paths.plan_chunk(&dir, i);
        let ops = [Op::Create(&path, chunk, zk::CreateMode::Persistent)];
        fenced::write(session, layout, writer_epoch, &ops)
            .map_err(|f| f.into_store_error(&path))?;
    }
    Ok(PlanRef {
        dir,
        entries: plan.len(),
        chunks: chunks.len(),
        crc32: crc32(&all),
    })
}

/// Reads the plan `r` refers to and verifies its size and checksum.
pub(crate) fn read_plan(
    session: &mut Session,
    paths: &Paths,
    r: &PlanRef,
) -> Result<Plan, StoreError> {
    let mut all = Vec::new();
    let mut entries: Vec<_> = Vec::with_capacity(r.entries);
    for i in 0..r.chunks {
        let path = paths.plan_chunk(&r.dir, i);
        let data = match session.call(|c| c.get_data(&path)) {
            Ok((data, _)) => data,
            Err(Fail::Zk(zk::Error::NoNode)) => {
                return Err(StoreError::Corrupt {
                    node: path,
                    detail: "plan chunk missing".into(),
                })
            }
            Err(e) => return Err(session.fail(e, "reading the plan")),
        };
        let chunk: PlanChunk = decode(&path, &data)?;
        entries.extend(chunk);
        all.extend_from_slice(&data);
    }
    let task = paths.task();
    if crc32(&all) != r.crc32 || entries.len() != r.entries {
        return Err(StoreError::Corrupt {
            node: task,
            detail: format!(
                "plan {} does not verify ({} entries, {} expected, or checksum)",
                r.dir,
                entries.len(),
                r.entries
            ),
        });
    }
    Ok(Plan::new(entries))
}

/// Removes plan directories other than `keep` (best effort: orphans of failed or replaced
/// writes; fenced like every write).
pub(crate) fn collect_plans(
    session: &mut Session,
    layout: &Layout,
    writer_epoch: Epoch,
    keep: &str,
) {
    let plans = layout.paths.plans();
    let Ok(dirs) = session.call(|c| c.list_children(&plans)) else {
        return;
    };
    for dir in dirs.into_iter().filter(|d| d != keep) {
        let dir_path = format!("{plans}/{dir}");
        let Ok(chunks) = session.call(|c| c.list_children(&dir_path)) else {
            continue;
        };
        let paths: Vec<String> = chunks.iter().map(|c| format!("{dir_path}/{c}")).collect();
        let mut ops: Vec<Op<'_>> = paths.iter().map(|p| Op::Delete(p, -1)).collect();
        ops.push(Op::Delete(&dir_path, -1));
        let _ = fenced::write(session, layout, writer_epoch, &ops);
    }
}
