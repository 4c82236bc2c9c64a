//! A list stored inline up to `N` entries and shared copy-on-write beyond: the per-bucket and
//! per-server state of the model.
//!
//! The exhaustive presets have at most a few buckets and servers, and the checker clones a
//! state for every transition it explores, so at their size a clone must stay a plain copy.
//! Replays and random walks of Fluss-sized clusters (16 buckets, 16 servers) need more entries;
//! an inline capacity of 16 would quadruple every state of the small presets (a server keeps a
//! view per bucket). Past `N` the entries move to one heap block behind an `Arc`: a clone is a
//! reference count, and a write copies the block only while another state shares it.
//!
//! Equality, ordering and hashing look only at the entries, never at where they are stored;
//! unused inline slots are kept at `T::default()`. Serialized as a JSON array.

use serde::{Deserialize, Deserializer};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

#[derive(Clone)]
pub enum SpillVec<T: Clone + Default, const N: usize> {
    Inline { len: u8, items: [T; N] },
    Spilled(Arc<Vec<T>>),
}

impl<T: Clone + Default, const N: usize> SpillVec<T, N> {
    pub fn new() -> Self {
        SpillVec::Inline {
            len: 0,
            items: std::array::from_fn(|_| T::default()),
        }
    }

    pub fn from_slice(items: &[T]) -> Self {
        items.iter().cloned().collect()
    }

    pub fn as_slice(&self) -> &[T] {
        match self {
            SpillVec::Inline { len, items } => &items[..*len as usize],
            SpillVec::Spilled(v) => v,
        }
    }

    /// The entries as a growable list: inline ones move to the heap first.
    fn spilled(&mut self) -> &mut Vec<T> {
        if let SpillVec::Inline { len, items } = self {
            let v: Vec<T> = items[..*len as usize].to_vec();
            *self = SpillVec::Spilled(Arc::new(v));
        }
        match self {
            SpillVec::Spilled(v) => Arc::make_mut(v),
            SpillVec::Inline { .. } => unreachable!("spilled above"),
        }
    }

    pub fn push(&mut self, x: T) {
        match self {
            SpillVec::Inline { len, items } if (*len as usize) < N => {
                items[*len as usize] = x;
                *len += 1;
            }
            _ => self.spilled().push(x),
        }
    }

    pub fn insert(&mut self, index: usize, x: T) {
        match self {
            SpillVec::Inline { len, items } if (*len as usize) < N => {
                let n = *len as usize;
                assert!(index <= n, "insert index {index} past length {n}");
                items[index..=n].rotate_right(1);
                items[index] = x;
                *len += 1;
            }
            _ => self.spilled().insert(index, x),
        }
    }

    pub fn remove(&mut self, index: usize) -> T {
        match self {
            SpillVec::Inline { len, items } => {
                let n = *len as usize;
                assert!(index < n, "remove index {index} past length {n}");
                let x = std::mem::take(&mut items[index]);
                items[index..n].rotate_left(1);
                *len -= 1;
                x
            }
            SpillVec::Spilled(v) => Arc::make_mut(v).remove(index),
        }
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        match self {
            SpillVec::Inline { len, items } => {
                let n = *len as usize;
                let mut w = 0;
                for r in 0..n {
                    if keep(&items[r]) {
                        items.swap(w, r);
                        w += 1;
                    }
                }
                for slot in &mut items[w..n] {
                    *slot = T::default();
                }
                *len = w as u8;
            }
            SpillVec::Spilled(v) => {
                let kept: Vec<T> = v.iter().filter(|x| keep(x)).cloned().collect();
                if kept.len() != v.len() {
                    *self = kept.into_iter().collect();
                }
            }
        }
    }

    pub fn clear(&mut self) {
        *self = Self::new();
    }
}

impl<T: Clone + Default, const N: usize> Default for SpillVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone + Default, const N: usize> Deref for SpillVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Clone + Default, const N: usize> DerefMut for SpillVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            SpillVec::Inline { len, items } => &mut items[..*len as usize],
            SpillVec::Spilled(v) => Arc::make_mut(v).as_mut_slice(),
        }
    }
}

crate::state::inline::list_by_entries!(SpillVec, [Clone + Default]);

/// The owned entries of a [`SpillVec`], without a heap allocation for an inline one.
pub enum IntoIter<T, const N: usize> {
    Inline(std::iter::Take<std::array::IntoIter<T, N>>),
    Spilled(std::vec::IntoIter<T>),
}

impl<T, const N: usize> Iterator for IntoIter<T, N> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        match self {
            IntoIter::Inline(i) => i.next(),
            IntoIter::Spilled(i) => i.next(),
        }
    }
}

impl<T: Clone + Default, const N: usize> IntoIterator for SpillVec<T, N> {
    type Item = T;
    type IntoIter = IntoIter<T, N>;
    fn into_iter(self) -> Self::IntoIter {
        match self {
            SpillVec::Inline { len, items } => {
                IntoIter::Inline(items.into_iter().take(len as usize))
            }
            SpillVec::Spilled(v) => IntoIter::Spilled(
                Arc::try_unwrap(v)
                    .unwrap_or_else(|v| (*v).clone())
                    .into_iter(),
            ),
        }
    }
}

impl<'de, T: Clone + Default + Deserialize<'de>, const N: usize> Deserialize<'de>
    for SpillVec<T, N>
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<T>::deserialize(deserializer)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::SpillVec;
    use crate::state::inline::tests::hash_of;

    #[test]
    fn behaves_like_a_vec_inline_and_spilled() {
        let mut v: SpillVec<u8, 2> = SpillVec::new();
        let mut w: Vec<u8> = Vec::new();
        for x in [3, 1, 4, 1, 5] {
            v.push(x);
            w.push(x);
        }
        assert!(matches!(v, SpillVec::Spilled(_)));
        v.insert(1, 9);
        w.insert(1, 9);
        assert_eq!(v.remove(0), w.remove(0));
        v.retain(|x| *x != 1);
        w.retain(|x| *x != 1);
        assert_eq!(v.as_slice(), w.as_slice());
        assert_eq!(serde_json::to_string(&v).unwrap(), "[9,4,5]");
        let mut i: SpillVec<u8, 4> = SpillVec::from_slice(&[1, 2, 3]);
        i.insert(0, 7);
        assert!(matches!(i, SpillVec::Inline { .. }));
        assert_eq!(i.into_iter().collect::<Vec<_>>(), vec![7, 1, 2, 3]);
    }

    #[test]
    fn equal_entries_compare_and_hash_equal_wherever_they_are_stored() {
        let a: SpillVec<u8, 2> = SpillVec::from_slice(&[1, 2]);
        let mut b: SpillVec<u8, 2> = SpillVec::from_slice(&[1, 2, 7]);
        b.retain(|x| *x < 3);
        assert!(matches!(a, SpillVec::Inline { .. }));
        assert_eq!(a, b);
        assert_eq!(hash_of(&a), hash_of(&b));
        let mut c = b.clone();
        c.remove(1);
        assert_ne!(a, c);
    }

    #[test]
    fn a_write_to_a_shared_block_leaves_the_other_copy_alone() {
        let a: SpillVec<u8, 1> = SpillVec::from_slice(&[1, 2, 3]);
        let mut b = a.clone();
        b[0] = 9;
        b.push(4);
        assert_eq!(a.as_slice(), &[1, 2, 3]);
        assert_eq!(b.as_slice(), &[9, 2, 3, 4]);
    }
}
