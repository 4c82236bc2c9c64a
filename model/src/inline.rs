//! A fixed-capacity list stored inline, so that cloning a model state is a plain copy with no
//! heap allocation (the checker clones a state for every transition it explores).
//!
//! Equality, ordering and hashing look only at the live prefix; the unused slots are kept at
//! `T::default()` so that a derived comparison would agree, but none depends on it. Serialized as
//! a JSON array, exactly like the `Vec` it replaces, so traces are unchanged.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
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

impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Default + Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<T: Copy + Default + PartialOrd, const N: usize> PartialOrd for InlineVec<T, N> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.as_slice().partial_cmp(other.as_slice())
    }
}

impl<T: Copy + Default + Ord, const N: usize> Ord for InlineVec<T, N> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl<T: Copy + Default + Hash, const N: usize> Hash for InlineVec<T, N> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for InlineVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = Self::new();
        for x in iter {
            v.push(x);
        }
        v
    }
}

impl<'a, T: Copy + Default, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Copy + Default, const N: usize> IntoIterator for InlineVec<T, N> {
    type Item = T;
    type IntoIter = std::iter::Take<std::array::IntoIter<T, N>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().take(self.len as usize)
    }
}

impl<T: Copy + Default + Serialize, const N: usize> Serialize for InlineVec<T, N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
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
mod tests {
    use super::InlineVec;
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    fn hash_of<T: Hash>(x: &T) -> u64 {
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
