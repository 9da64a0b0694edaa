//! How operator kinds compare and serialise: a [`Kind`] by its name, a
//! [`CustomOperator`] by its kind's name and its `params`.

use super::*;

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.name() == other.name()
    }
}
impl Eq for Kind {}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A built-in name or a registered one; an unknown name lists them all.
impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Kind::from_name(&name).ok_or_else(|| {
            let known: Vec<&str> = crate::scenario::registry::all_kinds()
                .into_iter()
                .map(|k| k.0)
                .collect();
            de::Error::custom(format!(
                "unknown operator kind `{name}` (known: {})",
                known.join(", ")
            ))
        })
    }
}

impl PartialEq for CustomOperator {
    fn eq(&self, other: &CustomOperator) -> bool {
        self.info.name == other.info.name && self.params == other.params
    }
}

impl Serialize for CustomOperator {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("CustomOperator", 2)?;
        st.serialize_field("name", self.info.name)?;
        st.serialize_field("params", &self.params)?;
        st.end()
    }
}
