-- HDB++'s layout on ClickHouse 18.16, a what-if engine, rendered by hdbbench (hdbbench schema sql); see schemas/README.md and hdbbench/backends/clickhouse/tables.py

-- Attribute Configuration Table
CREATE TABLE `att_conf`
(
    `att_conf_id` UInt64,
    `att_name` String,
    `table_name` String,
    `att_conf_type_id` UInt8,
    `att_conf_format_id` UInt8,
    `att_conf_write_id` UInt8,
    `cs_name` String,
    `domain` String,
    `family` String,
    `member` String,
    `name` String,
    `ttl` UInt32
)
ENGINE = ReplacingMergeTree
ORDER BY (att_conf_id);

-- Tango types (the Tango type number)
CREATE TABLE `att_conf_type`
(
    `att_conf_type_id` UInt8,
    `type` String
)
ENGINE = MergeTree
ORDER BY (att_conf_type_id);

-- Attribute formats
CREATE TABLE `att_conf_format`
(
    `att_conf_format_id` UInt8,
    `format` String
)
ENGINE = MergeTree
ORDER BY (att_conf_format_id);

-- Attribute write types
CREATE TABLE `att_conf_write`
(
    `att_conf_write_id` UInt8,
    `write` String
)
ENGINE = MergeTree
ORDER BY (att_conf_write_id);

-- Attribute Configuration Events History Table
CREATE TABLE `att_history`
(
    `att_conf_id` UInt64,
    `event_time` Int64,
    `event` Enum8('add' = 1, 'start' = 2, 'stop' = 3, 'remove' = 4, 'insert_param' = 5, 'update_ttl' = 6, 'pause' = 7, 'crash' = 8)
)
ENGINE = MergeTree
ORDER BY (att_conf_id, event_time);

-- Attribute configuration parameters
CREATE TABLE `att_parameter`
(
    `att_conf_id` UInt64,
    `recv_time` Int64,
    `label` String,
    `unit` String,
    `standard_unit` String,
    `display_unit` String,
    `format` String,
    `archive_rel_change` String,
    `archive_abs_change` String,
    `archive_period` String,
    `description` String,
    `enum_labels` Array(String)
)
ENGINE = MergeTree
ORDER BY (att_conf_id, recv_time);

-- Error Description Table
CREATE TABLE `att_error_desc`
(
    `att_error_desc_id` UInt64,
    `error_desc` String
)
ENGINE = ReplacingMergeTree
ORDER BY (att_error_desc_id);

-- Scalar Boolean Values Table
CREATE TABLE `att_scalar_devboolean`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(UInt8),
    `value_w` Nullable(UInt8),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Boolean Values Table
CREATE TABLE `att_array_devboolean`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(UInt8),
    `value_w` Array(UInt8),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Uchar Values Table
CREATE TABLE `att_scalar_devuchar`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(UInt8),
    `value_w` Nullable(UInt8),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Uchar Values Table
CREATE TABLE `att_array_devuchar`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(UInt8),
    `value_w` Array(UInt8),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Short Values Table
CREATE TABLE `att_scalar_devshort`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(Int16),
    `value_w` Nullable(Int16),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Short Values Table
CREATE TABLE `att_array_devshort`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(Int16),
    `value_w` Array(Int16),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Ushort Values Table
CREATE TABLE `att_scalar_devushort`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(UInt16),
    `value_w` Nullable(UInt16),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Ushort Values Table
CREATE TABLE `att_array_devushort`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(UInt16),
    `value_w` Array(UInt16),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Long Values Table
CREATE TABLE `att_scalar_devlong`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(Int32),
    `value_w` Nullable(Int32),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Long Values Table
CREATE TABLE `att_array_devlong`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(Int32),
    `value_w` Array(Int32),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Ulong Values Table
CREATE TABLE `att_scalar_devulong`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(UInt32),
    `value_w` Nullable(UInt32),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Ulong Values Table
CREATE TABLE `att_array_devulong`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(UInt32),
    `value_w` Array(UInt32),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Long64 Values Table
CREATE TABLE `att_scalar_devlong64`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(Int64),
    `value_w` Nullable(Int64),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Long64 Values Table
CREATE TABLE `att_array_devlong64`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(Int64),
    `value_w` Array(Int64),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Ulong64 Values Table
CREATE TABLE `att_scalar_devulong64`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(UInt64),
    `value_w` Nullable(UInt64),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Ulong64 Values Table
CREATE TABLE `att_array_devulong64`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(UInt64),
    `value_w` Array(UInt64),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Float Values Table
CREATE TABLE `att_scalar_devfloat`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(Float32),
    `value_w` Nullable(Float32),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Float Values Table
CREATE TABLE `att_array_devfloat`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(Float32),
    `value_w` Array(Float32),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Double Values Table
CREATE TABLE `att_scalar_devdouble`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(Float64),
    `value_w` Nullable(Float64),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Double Values Table
CREATE TABLE `att_array_devdouble`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(Float64),
    `value_w` Array(Float64),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar String Values Table
CREATE TABLE `att_scalar_devstring`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(String),
    `value_w` Nullable(String),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array String Values Table
CREATE TABLE `att_array_devstring`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(String),
    `value_w` Array(String),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar State Values Table
CREATE TABLE `att_scalar_devstate`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(UInt8),
    `value_w` Nullable(UInt8),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array State Values Table
CREATE TABLE `att_array_devstate`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(UInt8),
    `value_w` Array(UInt8),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Scalar Enum Values Table
CREATE TABLE `att_scalar_devenum`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Nullable(Int16),
    `value_w` Nullable(Int16),
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

-- Array Enum Values Table
CREATE TABLE `att_array_devenum`
(
    `att_conf_id` UInt64,
    `data_time` Int64,
    `value_r` Array(Int16),
    `value_w` Array(Int16),
    `dim_x_r` UInt32,
    `dim_y_r` UInt32,
    `dim_x_w` UInt32,
    `dim_y_w` UInt32,
    `quality` Int8,
    `att_error_desc_id` Nullable(UInt64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(data_time, 1000000)))
ORDER BY (att_conf_id, data_time);

INSERT INTO `att_conf_type` VALUES (1, 'DEV_BOOLEAN'), (2, 'DEV_SHORT'), (3, 'DEV_LONG'), (4, 'DEV_FLOAT'), (5, 'DEV_DOUBLE'), (6, 'DEV_USHORT'), (7, 'DEV_ULONG'), (8, 'DEV_STRING'), (19, 'DEV_STATE'), (22, 'DEV_UCHAR'), (23, 'DEV_LONG64'), (24, 'DEV_ULONG64'), (28, 'DEV_ENCODED'), (29, 'DEV_ENUM');

INSERT INTO `att_conf_format` VALUES (0, 'SCALAR'), (1, 'SPECTRUM'), (2, 'IMAGE');

INSERT INTO `att_conf_write` VALUES (0, 'READ'), (1, 'READ_WITH_WRITE'), (2, 'WRITE'), (3, 'READ_WRITE');
