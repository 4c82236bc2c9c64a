//! A fixed-capacity list stored inline, so that cloning a model state is a plain copy with no
//! heap allocation (the checker clones a state for every transition it explores).
//!
//! Equality, ordering and hashing look only at the live prefix; the unused slots are kept at
//! `T::default()` so that a derived comparison would agree, but none depends on it. Serialized as
//! a JSON array, exactly like the `Vec` it replaces, so traces are unchanged.

use serde::{Deserialize, Deserializer};
use std::ops::{Deref, DerefMut};

#[derive(Clone, Copy)]
pub struct InlineVec<T: Copy + Default, const N: usize> {
    len: u8,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    pub const CAPACITY: usize = N;

    pub fn new() -> Self {
        InlineVec {
            len: 0,
            items: [T::default(); N],
        }
    }

    /// A copy of `items`. Panics when `items` is longer than the capacity: every producer of a
    /// longer list is refused earlier, by configuration validation or by deserialization.
    pub fn from_slice(items: &[T]) -> Self {
        let mut v = Self::new();
        for x in items {
            v.push(*x);
        }
        v
    }

    pub fn as_slice(&self) -> &[T] {
        &self.items[..self.len as usize]
    }

    pub fn push(&mut self, x: T) {
        let n = self.len as usize;
        assert!(n < N, "inline list full: capacity {N}");
        self.items[n] = x;
        self.len += 1;
    }

    pub fn insert(&mut self, index: usize, x: T) {
        let n = self.len as usize;
        assert!(index <= n, "insert index {index} past length {n}");
        assert!(n < N, "inline list full: capacity {N}");
        self.items.copy_within(index..n, index + 1);
        self.items[index] = x;
        self.len += 1;
    }

    pub fn remove(&mut self, index: usize) -> T {
        let n = self.len as usize;
        assert!(index < n, "remove index {index} past length {n}");
        let x = self.items[index];
        self.items.copy_within(index + 1..n, index);
        self.items[n - 1] = T::default();
        self.len -= 1;
        x
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let n = self.len as usize;
        let mut w = 0;
        for r in 0..n {
            let x = self.items[r];
            if keep(&x) {
                self.items[w] = x;
                w += 1;
            }
        }
        for slot in &mut self.items[w..n] {
            *slot = T::default();
        }
        self.len = w as u8;
    }

    pub fn clear(&mut self) {
        self.retain(|_| false);
    }
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + Default, const N: usize> DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..self.len as usize]
    }
}

/// Equality, ordering, hashing, debug output, collection and serialization of a list type by
/// its live entries (`as_slice`, `push`), never by how it stores them: the model's lists
/// ([`InlineVec`], [`crate::state::spill::SpillVec`]) must agree on these to be interchangeable.
macro_rules! list_by_entries {
    ($list:ident, [$($bound:tt)*]) => {
        impl<T, const N: usize> PartialEq for $list<T, N>
        where
            T: $($bound)* + PartialEq,
        {
            fn eq(&self, other: &Self) -> bool {
                self.as_slice() == other.as_slice()
            }
        }

        impl<T, const N: usize> Eq for $list<T, N> where T: $($bound)* + Eq {}

        impl<T, const N: usize> PartialOrd for $list<T, N>
        where
            T: $($bound)* + PartialOrd,
        {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                self.as_slice().partial_cmp(other.as_slice())
            }
        }

        impl<T, const N: usize> Ord for $list<T, N>
        where
            T: $($bound)* + Ord,
        {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.as_slice().cmp(other.as_slice())
            }
        }

        impl<T, const N: usize> std::hash::Hash for $list<T, N>
        where
            T: $($bound)* + std::hash::Hash,
        {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.as_slice().hash(state);
            }
        }

        impl<T, const N: usize> std::fmt::Debug for $list<T, N>
        where
            T: $($bound)* + std::fmt::Debug,
        {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_list().entries(self.as_slice()).finish()
            }
        }

        impl<T, const N: usize> FromIterator<T> for $list<T, N>
        where
            T: $($bound)*,
        {
            fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
                let mut v = Self::new();
                for x in iter {
                    v.push(x);
                }
                v
            }
        }

        impl<'a, T, const N: usize> IntoIterator for &'a $list<T, N>
        where
            T: $($bound)*,
        {
            type Item = &'a T;
            type IntoIter = std::slice::Iter<'a, T>;
            fn into_iter(self) -> Self::IntoIter {
                self.as_slice().iter()
            }
        }

        impl<T, const N: usize> serde::Serialize for $list<T, N>
        where
            T: $($bound)* + serde::Serialize,
        {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.as_slice())
            }
        }
    };
}
pub(crate) use list_by_entries;

list_by_entries!(InlineVec, [Copy + Default]);

impl<T: Copy + Default, const N: usize> IntoIterator for InlineVec<T, N> {
    type Item = T;
    type IntoIter = std::iter::Take<std::array::IntoIter<T, N>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().take(self.len as usize)
    }
}

impl<'de, T: Copy + Default + Deserialize<'de>, const N: usize> Deserialize<'de>
    for InlineVec<T, N>
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        if items.len() > N {
            return Err(serde::de::Error::custom(format!(
                "{} entries, at most {N} allowed",
                items.len()
            )));
        }
        Ok(Self::from_slice(&items))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::InlineVec;
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    /// A value's hash, to compare two lists' hashes (the spill list's tests use it too).
    pub(crate) fn hash_of<T: Hash>(x: &T) -> u64 {
        let mut h = DefaultHasher::new();
        x.hash(&mut h);
        h.finish()
    }

    #[test]
    fn behaves_like_a_vec() {
        let mut v: InlineVec<u8, 4> = InlineVec::new();
        let mut w: Vec<u8> = Vec::new();
        for x in [3, 1, 4] {
            v.push(x);
            w.push(x);
        }
        v.insert(1, 9);
        w.insert(1, 9);
        assert_eq!(v.as_slice(), w.as_slice());
        assert_eq!(v.remove(0), w.remove(0));
        v.retain(|x| *x != 1);
        w.retain(|x| *x != 1);
        assert_eq!(v.as_slice(), w.as_slice());
        assert_eq!(serde_json::to_string(&v).unwrap(), "[9,4]");
    }

    #[test]
    fn equal_contents_compare_and_hash_equal_whatever_the_history() {
        let a: InlineVec<u8, 4> = InlineVec::from_slice(&[1, 2]);
        let mut b: InlineVec<u8, 4> = InlineVec::from_slice(&[1, 2, 7, 8]);
        b.retain(|x| *x < 3);
        assert_eq!(a, b);
        assert_eq!(hash_of(&a), hash_of(&b));
        let mut c = b;
        c.remove(1);
        assert_ne!(a, c);
    }

    #[test]
    fn refuses_more_than_capacity_when_deserialized() {
        let e = serde_json::from_str::<InlineVec<u8, 2>>("[1,2,3]").unwrap_err();
        assert!(e.to_string().contains("at most 2"), "{e}");
    }

    #[test]
    #[should_panic(expected = "capacity 2")]
    fn push_past_capacity_panics() {
        let mut v: InlineVec<u8, 2> = InlineVec::new();
        for x in 0..3 {
            v.push(x);
        }
    }
}
