//! A map keyed by bucket id, in ascending id order, for the two maps every input reads: the
//! context's cache of bucket records and the plan's per-bucket statuses (NOTES.md, "Scale").
//!
//! Bucket ids are small integers in practice (spec 2), so while they stay dense the map is a
//! vector indexed by id: a lookup is one index, not a walk down an ordered tree, which at a
//! million buckets is most of what an input costs. Ids far apart (more than `DENSITY` times as
//! many slots as entries, past a slack) would waste memory as a vector, so the map then becomes an
//! ordered tree for good; either way it iterates in ascending id order, as `BTreeMap` did.

use std::collections::BTreeMap;

use crate::core::types::BucketId;

/// A dense map holds at most this many slots per entry (plus `SLACK`) before it turns into a
/// tree: the cache and the plan hold every bucket (one slot each), a server's replicas in the
/// simulated cluster three buckets in eight.
const DENSITY: usize = 4;
/// Slots a dense map may hold beyond `DENSITY` per entry before it turns into a tree.
const SLACK: usize = 1 << 12;

#[derive(Clone, Debug)]
enum Repr<V> {
    /// `slots[b]` holds bucket `b`'s value.
    Dense(Vec<Option<V>>),
    /// Sparse ids.
    Sparse(BTreeMap<BucketId, V>),
}

/// A map from bucket id to `V`, iterated in ascending id order; see the module documentation.
#[derive(Clone, Debug)]
pub struct BucketMap<V> {
    repr: Repr<V>,
    len: usize,
}

impl<V> Default for BucketMap<V> {
    fn default() -> Self {
        BucketMap {
            repr: Repr::Dense(Vec::new()),
            len: 0,
        }
    }
}

impl<V> BucketMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Bucket `b`'s value.
    pub fn get(&self, b: &BucketId) -> Option<&V> {
        match &self.repr {
            Repr::Dense(slots) => slots.get(*b as usize).and_then(Option::as_ref),
            Repr::Sparse(map) => map.get(b),
        }
    }

    /// Bucket `b`'s value, to change.
    pub fn get_mut(&mut self, b: &BucketId) -> Option<&mut V> {
        match &mut self.repr {
            Repr::Dense(slots) => slots.get_mut(*b as usize).and_then(Option::as_mut),
            Repr::Sparse(map) => map.get_mut(b),
        }
    }

    /// Whether bucket `b` has a value.
    pub fn contains_key(&self, b: &BucketId) -> bool {
        self.get(b).is_some()
    }

    /// Inserts `v` for `b`, returning the value it replaces.
    pub fn insert(&mut self, b: BucketId, v: V) -> Option<V> {
        let i = b as usize;
        if let Repr::Dense(slots) = &mut self.repr {
            if i >= slots.len() && i >= DENSITY * (self.len + 1) + SLACK {
                self.make_sparse();
            }
        }
        let old = match &mut self.repr {
            Repr::Dense(slots) => {
                if i >= slots.len() {
                    slots.resize_with(i + 1, || None);
                }
                slots[i].replace(v)
            }
            Repr::Sparse(map) => map.insert(b, v),
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// The entries in ascending bucket order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = (BucketId, &V)> + '_> {
        match &self.repr {
            Repr::Dense(slots) => Box::new(
                slots
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| v.as_ref().map(|v| (i as BucketId, v))),
            ),
            Repr::Sparse(map) => Box::new(map.iter().map(|(b, v)| (*b, v))),
        }
    }

    /// The ids in ascending order.
    pub fn keys(&self) -> impl Iterator<Item = BucketId> + '_ {
        self.iter().map(|(b, _)| b)
    }

    fn make_sparse(&mut self) {
        if let Repr::Dense(slots) = &mut self.repr {
            let map = std::mem::take(slots)
                .into_iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i as BucketId, v)))
                .collect();
            self.repr = Repr::Sparse(map);
        }
    }
}

impl<V: PartialEq> BucketMap<V> {
    /// The same entries as `other`.
    pub fn same_as(&self, other: &BTreeMap<BucketId, V>) -> bool {
        self.len == other.len() && other.iter().all(|(b, v)| self.get(b) == Some(v))
    }
}

/// Dense or sparse is decided from all the ids at once, so that the order they come in (a plan
/// lists its buckets in admission order) does not matter.
impl<V> FromIterator<(BucketId, V)> for BucketMap<V> {
    fn from_iter<I: IntoIterator<Item = (BucketId, V)>>(iter: I) -> Self {
        let entries: Vec<(BucketId, V)> = iter.into_iter().collect();
        let slots = entries
            .iter()
            .map(|(b, _)| *b as usize + 1)
            .max()
            .unwrap_or(0);
        let mut map = BucketMap::new();
        if slots > DENSITY * entries.len() + SLACK {
            map.repr = Repr::Sparse(BTreeMap::new());
        } else if let Repr::Dense(v) = &mut map.repr {
            v.resize_with(slots, || None);
        }
        for (b, v) in entries {
            map.insert(b, v);
        }
        map
    }
}

impl<V> std::ops::Index<&BucketId> for BucketMap<V> {
    type Output = V;

    fn index(&self, b: &BucketId) -> &V {
        self.get(b).expect("no entry for the bucket")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_agree_with_an_ordered_map() {
        // Dense ids, then one far away: the map turns sparse and keeps every entry and the order.
        let mut map = BucketMap::new();
        let mut reference = BTreeMap::new();
        let ids: Vec<BucketId> = (0..50).rev().chain([7, 3, 1_000_000_000, 12]).collect();
        for (n, b) in ids.into_iter().enumerate() {
            assert_eq!(map.insert(b, n), reference.insert(b, n));
            assert_eq!(map.len(), reference.len());
        }
        assert!(matches!(map.repr, Repr::Sparse(_)));
        assert!(map.same_as(&reference));
        let got: Vec<_> = map.iter().map(|(b, v)| (b, *v)).collect();
        let want: Vec<_> = reference.iter().map(|(b, v)| (*b, *v)).collect();
        assert_eq!(got, want);
        assert_eq!(map.get(&1_000_000_000), Some(&52));
        assert_eq!(map.get(&8), Some(&41));
        assert_eq!(map.get(&51), None);
    }

    #[test]
    fn dense_ids_stay_a_vector() {
        let map: BucketMap<u8> = (0..10_000).rev().map(|b| (b, 1)).collect();
        assert!(matches!(map.repr, Repr::Dense(_)));
        assert_eq!(map.keys().take(3).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(map[&9_999], 1);
        assert_eq!(map.get(&10_000), None);
    }
}
