//! The building blocks of the schema: `table!` (a table as written),
//! `section!` (a table declared once, key by key, with its validated form,
//! its checks and its writer), `operators!` (the operator kinds declared
//! once, each with its keys declared the same way), and the [`Key`] types
//! that say how each key is read, checked and written. A `section!` key
//! declared with `#[key(type, default)]` is also its row of
//! docs/scenarios.md ([`KeyDoc`]: those two texts and its doc comment as
//! the meaning; `super::docs` writes the tables), so a key's default,
//! check and help are stated in one place.

use super::*;

/// A table of the file: the struct, strict about unknown keys, and its
/// `Default` from the value after each key, the only place it is given.
macro_rules! table {
    ($(#[$m:meta])* $name:ident { $($(#[$f:meta])* $key:ident: $ty:ty = $default:expr,)* }) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name { $($(#[$f])* pub $key: $ty,)* }

        impl Default for $name {
            fn default() -> Self {
                $name { $($key: $default,)* }
            }
        }
    };
}

/// What a key of a `section!` holds: its type in the file, its type in
/// a validated [`Scenario`], and how a validated value is written back.
pub trait Key {
    type File: Clone + fmt::Debug + PartialEq;
    type Valid;
    fn write(value: &Self::Valid) -> Self::File;
}

/// How a key is checked: its value and the default it takes after a
/// problem, at the key `key` of the validator's current table.
pub(super) trait Check: Key {
    fn check(v: &mut Validator, key: &str, value: &Self::File, default: &Self::File)
        -> Self::Valid;
}

/// An integer: an `i64` in the file, checked against [`range_of`] its key.
macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            type File = i64;
            type Valid = $t;
            fn write(n: &$t) -> i64 {
                int(u64::from(*n))
            }
        }
        impl Check for $t {
            fn check(v: &mut Validator, key: &str, n: &i64, default: &i64) -> $t {
                v.int(key, *n, *default)
            }
        }
    )*};
}
int_key!(u32, u64);

/// A flag or a name: the same in the file and validated, nothing to check.
macro_rules! same_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            type File = $t;
            type Valid = $t;
            fn write(value: &$t) -> $t {
                value.clone()
            }
        }
        impl Check for $t {
            fn check(_: &mut Validator, _: &str, value: &$t, _: &$t) -> $t {
                value.clone()
            }
        }
    )*};
}
same_key!(
    bool,
    i64,
    String,
    KeyDistribution,
    SplitAssignment,
    Redistribution,
    Delivery,
    TxnNaming,
    LogIsolation,
    StartingOffsets,
    Algorithm,
    InputOrder,
    FlinkVersion,
    StorageKind,
    StateBackend,
    SavepointFormat,
    Placement,
    MemoryLoss,
    FailoverStrategy
);

/// A duration (or, `Dur<SimTime>`, a time) of at most [`crate::scenario::MAX_DURATION`].
pub struct Dur<T = SimDuration>(PhantomData<T>);
/// A duration (or a time) greater than zero and at most [`crate::scenario::MAX_DURATION`].
pub struct Positive<T = SimDuration>(PhantomData<T>);
/// A size in bytes, at least 1 and at most [`crate::scenario::MAX_BYTES`].
pub struct Size;
impl Key for Size {
    type File = Bytes;
    type Valid = u64;
    fn write(n: &u64) -> Bytes {
        Bytes(*n)
    }
}
impl Check for Size {
    fn check(v: &mut Validator, key: &str, b: &Bytes, default: &Bytes) -> u64 {
        let max = crate::scenario::MAX_BYTES;
        v.bytes(key, Some(*b), default.0, max).unwrap_or(default.0)
    }
}
/// A key its table checks and writes by hand (its default depends on other
/// keys, or it names operators): `F` in the file, `V` validated.
pub struct Custom<F, V>(PhantomData<(F, V)>);
/// A time written as text inside an array (coordinator crashes), read where
/// it is by hand.
pub struct TimeText;
impl Key for TimeText {
    type File = String;
    type Valid = SimTime;
    fn write(t: &SimTime) -> String {
        duration_text(SimDuration(t.0))
    }
}
/// A key of type `K` its table checks by hand (with the keys it depends on).
pub struct Hand<K>(PhantomData<K>);
/// A key of type `K` that is an `Option` in the file, required or with a
/// default that depends on other keys, checked by hand; always written.
pub struct Opt<K>(PhantomData<K>);

/// [`SimDuration`] or [`SimTime`].
pub trait Span: Copy {
    fn of(d: SimDuration) -> Self;
    fn span(self) -> SimDuration;
}
impl Span for SimDuration {
    fn of(d: SimDuration) -> Self {
        d
    }
    fn span(self) -> SimDuration {
        self
    }
}
impl Span for SimTime {
    fn of(d: SimDuration) -> Self {
        SimTime(d.nanos())
    }
    fn span(self) -> SimDuration {
        SimDuration(self.0)
    }
}

/// `Dur` and `Positive`: a [`Duration`] in the file, checked by
/// `Validator::dur` or `Validator::positive`.
macro_rules! span_key {
    ($($key:ident $check:ident),*) => {$(
        impl<T: Span> Key for $key<T> {
            type File = Duration;
            type Valid = T;
            fn write(value: &T) -> Duration {
                Duration(value.span())
            }
        }
        impl<T: Span> Check for $key<T> {
            fn check(v: &mut Validator, key: &str, d: &Duration, default: &Duration) -> T {
                T::of(v.$check(key, *d, *default))
            }
        }
    )*};
}
span_key!(Dur dur, Positive positive);

impl<F: Clone + fmt::Debug + PartialEq + Default, V: Default> Key for Custom<F, V> {
    type File = F;
    type Valid = V;
    fn write(_: &V) -> F {
        F::default()
    }
}
impl<F: Clone + fmt::Debug + PartialEq + Default, V: Default> Check for Custom<F, V> {
    fn check(_: &mut Validator, _: &str, _: &F, _: &F) -> V {
        V::default()
    }
}
impl<K: Key> Key for Hand<K> {
    type File = K::File;
    type Valid = K::Valid;
    fn write(value: &K::Valid) -> K::File {
        K::write(value)
    }
}
impl<K: Key<Valid: Default>> Check for Hand<K> {
    fn check(_: &mut Validator, _: &str, _: &K::File, _: &K::File) -> K::Valid {
        K::Valid::default()
    }
}
impl<K: Key> Key for Opt<K> {
    type File = Option<K::File>;
    type Valid = K::Valid;
    fn write(value: &K::Valid) -> Option<K::File> {
        Some(K::write(value))
    }
}
impl<K: Key<Valid: Default>> Check for Opt<K> {
    fn check(_: &mut Validator, _: &str, _: &Self::File, _: &Self::File) -> K::Valid {
        K::Valid::default()
    }
}
impl<K: Key> Key for Option<K> {
    type File = Option<K::File>;
    type Valid = Option<K::Valid>;
    fn write(value: &Option<K::Valid>) -> Option<K::File> {
        value.as_ref().map(K::write)
    }
}
impl<K: Key> Key for Vec<K> {
    type File = Vec<K::File>;
    type Valid = Vec<K::Valid>;
    fn write(value: &Vec<K::Valid>) -> Vec<K::File> {
        value.iter().map(K::write).collect()
    }
}

/// A table declared once: each key with its [`Key`] type and its default
/// (as written in the file). Gives the file's struct (strict about unknown
/// keys) with its `Default`, the validated struct, `check` (every key
/// checked in order; [`Custom`] keys left at their `Default` for the
/// caller) and the writer's `From` the validated struct (`Custom` keys at
/// their default for the caller).
macro_rules! section {
    ($(#[doc = $doc:literal])* $file:ident => $spec:ident {
        $($(#[doc = $kdoc:literal])* $(#[key($kt:literal, $kd:literal)])?
        $(#[serde($($s:tt)*)])* $key:ident: $ty:ty = $default:expr,)*
    }) => {
        $(#[doc = $doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $file { $($(#[doc = $kdoc])* $(#[serde($($s)*)])* pub $key: <$ty as Key>::File,)* }

        impl Default for $file {
            fn default() -> Self {
                $file { $($key: $default,)* }
            }
        }

        $(#[doc = $doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
        pub struct $spec { $($(#[doc = $kdoc])* pub $key: <$ty as Key>::Valid,)* }

        impl $file {
            /// Every key checked, in order, at the validator's current table
            /// (unused by tables whose keys are all checked by hand).
            #[allow(dead_code)]
            pub(in crate::scenario) fn check(&self, v: &mut Validator) -> $spec {
                let d = $file::default();
                $spec { $($key: <$ty as Check>::check(v, stringify!($key), &self.$key, &d.$key),)* }
            }
        }

        impl From<&$spec> for $file {
            fn from(s: &$spec) -> $file {
                $file { $($key: <$ty as Key>::write(&s.$key),)* }
            }
        }

        impl Key for $file {
            type File = $file;
            type Valid = $spec;
            fn write(s: &$spec) -> $file {
                s.into()
            }
        }

        impl $file {
            /// Its keys as docs/scenarios.md's key table gives them (the
            /// keys declared with `#[key(type, default)]`, in order).
            pub const KEYS: &'static [Option<KeyDoc>] =
                &[$(key_doc!($key, [$($kdoc),*] $(, $kt, $kd)?),)*];
        }
    };
}

/// A key's row in docs/scenarios.md: its name, its type and range, its
/// default, and what it means (the lines of its doc comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyDoc {
    pub key: &'static str,
    pub kind: &'static str,
    pub default: &'static str,
    pub meaning: &'static [&'static str],
}

/// A key's [`KeyDoc`], if it is declared with `#[key(type, default)]`.
macro_rules! key_doc {
    ($key:ident, [$($doc:literal),*], $kt:literal, $kd:literal) => {
        Some(KeyDoc {
            key: stringify!($key),
            kind: $kt,
            default: $kd,
            meaning: &[$($doc),*],
        })
    };
    ($key:ident, [$($doc:literal),*]) => {
        None
    };
}

/// The default after a key of `operators!`, or `Default::default()`.
macro_rules! or_default {
    () => {
        Default::default()
    };
    ($d:expr) => {
        $d
    };
}

/// `[[operators]]` declared once: the keys every operator has (as in
/// `table!`), then each kind: its name in files, its `ckptsim list` text,
/// its keys as in `section!` (none needed for a [`Hand`] key's default),
/// in a struct of their own (`Source (SourceSpec { … })`), in the variant
/// (`Map { … }`) or none, and a check of its own with the keys it relates.
/// Gives [`OperatorKind`], [`Kind`], [`OPERATOR_KINDS`], the file's struct
/// with every kind's keys as `Option`s, and on it `kind_keys` (the keys
/// written, with their kind), `check_kind` and `write_kind`.
macro_rules! operators {
    (
        $(#[doc = $doc:literal])* $file:ident {
            $($(#[$cm:meta])* $ck:ident: $cty:ty = $cd:expr,)*
        }
        $(
            $(#[doc = $vdoc:literal])*
            $kind:ident = $name:literal, $what:literal
            $(($(#[doc = $sdoc:literal])* $spec:ident {
                $($(#[doc = $skdoc:literal])* $(#[serde($($ss:tt)*)])*
                $skey:ident: $sty:ty $(= $sd:expr)?,)*
            }))?
            $({
                $($(#[doc = $kdoc:literal])* $(#[serde($($s:tt)*)])*
                $key:ident: $ty:ty $(= $d:expr)?,)*
            })?
            $(, check $hook:path)?;
        )*
    ) => {
        /// An operator's kind with its keys, validated.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(rename_all = "kebab-case", tag = "kind")]
        pub enum OperatorKind {
            $($(#[doc = $vdoc])* $kind $(($spec))? $({ $($(#[doc = $kdoc])* $key: <$ty as Key>::Valid,)* })?,)*
            /// A kind registered by the user (`model::registry`), with its
            /// `params` table.
            Custom(CustomOperator),
        }

        $($(
            $(#[doc = $sdoc])*
            #[derive(Clone, Debug, PartialEq, Serialize)]
            pub struct $spec { $($(#[doc = $skdoc])* pub $skey: <$sty as Key>::Valid,)* }
        )?)*

        /// The `kind` of an operator, as files name it.
        #[derive(Clone, Copy, Debug)]
        pub enum Kind {
            $($kind,)*
            /// A registered kind (`model::registry`).
            Custom(&'static crate::scenario::registry::KindInfo),
        }

        impl Kind {
            /// Its name in files.
            pub fn name(self) -> &'static str {
                match self { $(Kind::$kind => $name,)* Kind::Custom(info) => info.name }
            }

            /// The built-in or registered kind called `name`.
            pub fn from_name(name: &str) -> Option<Kind> {
                match name {
                    $($name => Some(Kind::$kind),)*
                    _ => crate::scenario::registry::find(name).map(Kind::Custom),
                }
            }
        }

        /// All operator kind names, for `ckptsim list` and error messages.
        pub const OPERATOR_KINDS: &[(&str, &str)] = &[$(($name, $what),)*];

        impl OperatorKind {
            pub fn name(&self) -> &'static str {
                match self {
                    $(OperatorKind::$kind { .. } => $name,)*
                    OperatorKind::Custom(c) => c.info.name,
                }
            }
        }

        $(#[doc = $doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $file {
            $($(#[$cm])* pub $ck: $cty,)*
            $($($(
                $(#[doc = $skdoc])* $(#[serde($($ss)*)])* pub $skey: Option<<$sty as Key>::File>,
            )*)? $($(
                $(#[doc = $kdoc])* $(#[serde($($s)*)])* pub $key: Option<<$ty as Key>::File>,
            )*)?)*
        }

        impl Default for $file {
            fn default() -> Self {
                $file {
                    $($ck: $cd,)*
                    $($($($skey: None,)*)? $($($key: None,)*)?)*
                }
            }
        }

        impl $file {
            /// The kind's keys that are written, each with its kind.
            pub(super) fn kind_keys(&self) -> Vec<(&'static str, Kind)> {
                let keys = [$(
                    $($((stringify!($skey), Kind::$kind, self.$skey.is_some()),)*)?
                    $($((stringify!($key), Kind::$kind, self.$key.is_some()),)*)?
                )*];
                keys.into_iter().filter(|k| k.2).map(|k| (k.0, k.1)).collect()
            }

            /// The keys of `kind` checked in order at the validator's current
            /// table (absent ones at their defaults), then its own check.
            pub(super) fn check_kind(
                &self,
                v: &mut Validator,
                kind: Kind,
                parallelism: Option<u32>,
            ) -> OperatorKind {
                fn key<K: Check>(v: &mut Validator, key: &str, value: &Option<K::File>, d: K::File) -> K::Valid {
                    K::check(v, key, value.as_ref().unwrap_or(&d), &d)
                }
                let _ = parallelism;
                match kind {$(Kind::$kind => {
                    let spec = OperatorKind::$kind
                        $(($spec { $($skey: key::<$sty>(v, stringify!($skey), &self.$skey, or_default!($($sd)?)),)* }))?
                        $({ $($key: key::<$ty>(v, stringify!($key), &self.$key, or_default!($($d)?)),)* })?;
                    $(let spec = $hook(v, self, spec, parallelism);)?
                    spec
                })*
                Kind::Custom(info) => super::kinds::custom(v, info, self.params.clone()),
                }
            }
        }

        /// The kind's keys as written, every one of them.
        fn write_kind(kind: &OperatorKind) -> $file {
            match kind {$(
                OperatorKind::$kind $(($spec { $($skey,)* }))? $({ $($key,)* })? => $file {
                    kind: Some(Kind::$kind),
                    $($($skey: Some(<$sty as Key>::write($skey)),)*)?
                    $($($key: Some(<$ty as Key>::write($key)),)*)?
                    ..$file::default()
                },
            )*
                OperatorKind::Custom(c) => $file {
                    kind: Some(Kind::Custom(c.info)),
                    params: (!c.params.is_empty()).then(|| c.params.clone()),
                    ..$file::default()
                },
            }
        }
    };
}
