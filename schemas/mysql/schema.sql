-- HDB++ schema rendered by hdbbench (hdbbench schema sql); see schemas/README.md

CREATE TABLE `att_conf` (
    `att_conf_id` int(10) unsigned AUTO_INCREMENT NOT NULL,
    `att_name` varchar(255) NOT NULL,
    `att_conf_data_type_id` int(10) unsigned NOT NULL,
    `att_ttl` int(10) unsigned DEFAULT NULL,
    `facility` varchar(255) NOT NULL DEFAULT '',
    `domain` varchar(255) NOT NULL DEFAULT '',
    `family` varchar(255) NOT NULL DEFAULT '',
    `member` varchar(255) NOT NULL DEFAULT '',
    `name` varchar(255) NOT NULL DEFAULT '',
    PRIMARY KEY (`att_conf_id`),
    UNIQUE KEY `att_name` (att_name),
    KEY `att_conf_data_type_id` (att_conf_data_type_id)
) ENGINE=InnoDB COMMENT='Attribute Configuration Table';

CREATE TABLE `att_conf_data_type` (
    `att_conf_data_type_id` int(10) unsigned AUTO_INCREMENT NOT NULL,
    `data_type` varchar(255) NOT NULL,
    `tango_data_type` tinyint(1) NOT NULL,
    PRIMARY KEY (`att_conf_data_type_id`)
) ENGINE=InnoDB COMMENT='Attribute types description';

CREATE TABLE `att_history` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `time` datetime(6) NOT NULL,
    `att_history_event_id` int(10) unsigned NOT NULL,
    PRIMARY KEY (`att_conf_id`, `time`),
    KEY `att_history_event_id` (att_history_event_id)
) ENGINE=InnoDB COMMENT='Attribute Configuration Events History Table';

CREATE TABLE `att_history_event` (
    `att_history_event_id` int(10) unsigned AUTO_INCREMENT NOT NULL,
    `event` varchar(255) NOT NULL,
    PRIMARY KEY (`att_history_event_id`)
) ENGINE=InnoDB COMMENT='Attribute history events description';

CREATE TABLE `att_parameter` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `label` varchar(255) NOT NULL DEFAULT '',
    `unit` varchar(64) NOT NULL DEFAULT '',
    `standard_unit` varchar(64) NOT NULL DEFAULT '1',
    `display_unit` varchar(64) NOT NULL DEFAULT '',
    `format` varchar(64) NOT NULL DEFAULT '',
    `archive_rel_change` varchar(64) NOT NULL DEFAULT '',
    `archive_abs_change` varchar(64) NOT NULL DEFAULT '',
    `archive_period` varchar(64) NOT NULL DEFAULT '',
    `description` varchar(1024) NOT NULL DEFAULT '',
    `enum_labels` JSON NOT NULL DEFAULT '[]',
    PRIMARY KEY (`att_conf_id`, `recv_time`)
) ENGINE=InnoDB COMMENT='Attribute configuration parameters';

CREATE TABLE `att_error_desc` (
    `att_error_desc_id` int(10) unsigned AUTO_INCREMENT NOT NULL,
    `error_desc` varchar(255) NOT NULL,
    PRIMARY KEY (`att_error_desc_id`),
    UNIQUE KEY `error_desc` (error_desc)
) ENGINE=InnoDB COMMENT='Error Description Table';

CREATE TABLE `att_scalar_devboolean_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` tinyint(1) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Boolean ReadOnly Values Table';

CREATE TABLE `att_scalar_devboolean_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` tinyint(1) unsigned DEFAULT NULL,
    `value_w` tinyint(1) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Boolean ReadWrite Values Table';

CREATE TABLE `att_array_devboolean_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` tinyint(1) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Boolean ReadOnly Values Table';

CREATE TABLE `att_array_devboolean_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` tinyint(1) unsigned DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` tinyint(1) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Boolean ReadWrite Values Table';

CREATE TABLE `att_scalar_devuchar_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Uchar ReadOnly Values Table';

CREATE TABLE `att_scalar_devuchar_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `value_w` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Uchar ReadWrite Values Table';

CREATE TABLE `att_array_devuchar_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Uchar ReadOnly Values Table';

CREATE TABLE `att_array_devuchar_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Uchar ReadWrite Values Table';

CREATE TABLE `att_scalar_devshort_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Short ReadOnly Values Table';

CREATE TABLE `att_scalar_devshort_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` smallint(6) DEFAULT NULL,
    `value_w` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Short ReadWrite Values Table';

CREATE TABLE `att_array_devshort_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Short ReadOnly Values Table';

CREATE TABLE `att_array_devshort_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` smallint(6) DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Short ReadWrite Values Table';

CREATE TABLE `att_scalar_devushort_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` smallint(5) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Ushort ReadOnly Values Table';

CREATE TABLE `att_scalar_devushort_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` smallint(5) unsigned DEFAULT NULL,
    `value_w` smallint(5) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Ushort ReadWrite Values Table';

CREATE TABLE `att_array_devushort_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` smallint(5) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Ushort ReadOnly Values Table';

CREATE TABLE `att_array_devushort_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` smallint(5) unsigned DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` smallint(5) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Ushort ReadWrite Values Table';

CREATE TABLE `att_scalar_devlong_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` int(11) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Long ReadOnly Values Table';

CREATE TABLE `att_scalar_devlong_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` int(11) DEFAULT NULL,
    `value_w` int(11) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Long ReadWrite Values Table';

CREATE TABLE `att_array_devlong_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` int(11) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Long ReadOnly Values Table';

CREATE TABLE `att_array_devlong_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` int(11) DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` int(11) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Long ReadWrite Values Table';

CREATE TABLE `att_scalar_devulong_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` int(10) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Ulong ReadOnly Values Table';

CREATE TABLE `att_scalar_devulong_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` int(10) unsigned DEFAULT NULL,
    `value_w` int(10) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Ulong ReadWrite Values Table';

CREATE TABLE `att_array_devulong_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` int(10) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Ulong ReadOnly Values Table';

CREATE TABLE `att_array_devulong_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` int(10) unsigned DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` int(10) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Ulong ReadWrite Values Table';

CREATE TABLE `att_scalar_devlong64_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` bigint(20) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Long64 ReadOnly Values Table';

CREATE TABLE `att_scalar_devlong64_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` bigint(20) DEFAULT NULL,
    `value_w` bigint(20) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Long64 ReadWrite Values Table';

CREATE TABLE `att_array_devlong64_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` bigint(20) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Long64 ReadOnly Values Table';

CREATE TABLE `att_array_devlong64_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` bigint(20) DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` bigint(20) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Long64 ReadWrite Values Table';

CREATE TABLE `att_scalar_devulong64_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` bigint(20) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Ulong64 ReadOnly Values Table';

CREATE TABLE `att_scalar_devulong64_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` bigint(20) unsigned DEFAULT NULL,
    `value_w` bigint(20) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Ulong64 ReadWrite Values Table';

CREATE TABLE `att_array_devulong64_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` bigint(20) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Ulong64 ReadOnly Values Table';

CREATE TABLE `att_array_devulong64_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` bigint(20) unsigned DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` bigint(20) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Ulong64 ReadWrite Values Table';

CREATE TABLE `att_scalar_devfloat_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` float DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Float ReadOnly Values Table';

CREATE TABLE `att_scalar_devfloat_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` float DEFAULT NULL,
    `value_w` float DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Float ReadWrite Values Table';

CREATE TABLE `att_array_devfloat_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` float DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Float ReadOnly Values Table';

CREATE TABLE `att_array_devfloat_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` float DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` float DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Float ReadWrite Values Table';

CREATE TABLE `att_scalar_devdouble_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` double DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Double ReadOnly Values Table';

CREATE TABLE `att_scalar_devdouble_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` double DEFAULT NULL,
    `value_w` double DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Double ReadWrite Values Table';

CREATE TABLE `att_array_devdouble_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` double DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Double ReadOnly Values Table';

CREATE TABLE `att_array_devdouble_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` double DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` double DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Double ReadWrite Values Table';

CREATE TABLE `att_scalar_devstring_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` mediumtext DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar String ReadOnly Values Table';

CREATE TABLE `att_scalar_devstring_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` mediumtext DEFAULT NULL,
    `value_w` mediumtext DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar String ReadWrite Values Table';

CREATE TABLE `att_array_devstring_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` mediumtext DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array String ReadOnly Values Table';

CREATE TABLE `att_array_devstring_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` mediumtext DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` mediumtext DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array String ReadWrite Values Table';

CREATE TABLE `att_scalar_devstate_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar State ReadOnly Values Table';

CREATE TABLE `att_scalar_devstate_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `value_w` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar State ReadWrite Values Table';

CREATE TABLE `att_array_devstate_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array State ReadOnly Values Table';

CREATE TABLE `att_array_devstate_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` tinyint(3) unsigned DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` tinyint(3) unsigned DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array State ReadWrite Values Table';

CREATE TABLE `att_scalar_devencoded_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` blob DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    `format_r` varchar(255) DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Encoded ReadOnly Values Table';

CREATE TABLE `att_scalar_devencoded_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` blob DEFAULT NULL,
    `value_w` blob DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    `format_r` varchar(255) DEFAULT NULL,
    `format_w` varchar(255) DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Encoded ReadWrite Values Table';

CREATE TABLE `att_array_devencoded_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` blob DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    `format_r` varchar(255) DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Encoded ReadOnly Values Table';

CREATE TABLE `att_array_devencoded_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` blob DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` blob DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    `format_r` varchar(255) DEFAULT NULL,
    `format_w` varchar(255) DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Encoded ReadWrite Values Table';

CREATE TABLE `att_scalar_devenum_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Enum ReadOnly Values Table';

CREATE TABLE `att_scalar_devenum_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `value_r` smallint(6) DEFAULT NULL,
    `value_w` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`)
) ENGINE=InnoDB COMMENT='Scalar Enum ReadWrite Values Table';

CREATE TABLE `att_array_devenum_ro` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Enum ReadOnly Values Table';

CREATE TABLE `att_array_devenum_rw` (
    `att_conf_id` int(10) unsigned NOT NULL,
    `data_time` datetime(6) NOT NULL,
    `recv_time` datetime(6) NOT NULL,
    `idx` int(10) unsigned NOT NULL,
    `dim_x_r` int(10) unsigned NOT NULL,
    `dim_y_r` int(10) unsigned NOT NULL DEFAULT 0,
    `value_r` smallint(6) DEFAULT NULL,
    `dim_x_w` int(10) unsigned NOT NULL,
    `dim_y_w` int(10) unsigned NOT NULL DEFAULT 0,
    `value_w` smallint(6) DEFAULT NULL,
    `quality` tinyint(1) DEFAULT NULL,
    `att_error_desc_id` int(10) unsigned DEFAULT NULL,
    PRIMARY KEY (`att_conf_id`, `data_time`, `idx`)
) ENGINE=InnoDB COMMENT='Array Enum ReadWrite Values Table';

INSERT INTO att_conf_data_type (data_type, tango_data_type) VALUES ('scalar_devboolean_ro', 1), ('scalar_devboolean_rw', 1), ('array_devboolean_ro', 1), ('array_devboolean_rw', 1), ('scalar_devuchar_ro', 22), ('scalar_devuchar_rw', 22), ('array_devuchar_ro', 22), ('array_devuchar_rw', 22), ('scalar_devshort_ro', 2), ('scalar_devshort_rw', 2), ('array_devshort_ro', 2), ('array_devshort_rw', 2), ('scalar_devushort_ro', 6), ('scalar_devushort_rw', 6), ('array_devushort_ro', 6), ('array_devushort_rw', 6), ('scalar_devlong_ro', 3), ('scalar_devlong_rw', 3), ('array_devlong_ro', 3), ('array_devlong_rw', 3), ('scalar_devulong_ro', 7), ('scalar_devulong_rw', 7), ('array_devulong_ro', 7), ('array_devulong_rw', 7), ('scalar_devlong64_ro', 23), ('scalar_devlong64_rw', 23), ('array_devlong64_ro', 23), ('array_devlong64_rw', 23), ('scalar_devulong64_ro', 24), ('scalar_devulong64_rw', 24), ('array_devulong64_ro', 24), ('array_devulong64_rw', 24), ('scalar_devfloat_ro', 4), ('scalar_devfloat_rw', 4), ('array_devfloat_ro', 4), ('array_devfloat_rw', 4), ('scalar_devdouble_ro', 5), ('scalar_devdouble_rw', 5), ('array_devdouble_ro', 5), ('array_devdouble_rw', 5), ('scalar_devstring_ro', 8), ('scalar_devstring_rw', 8), ('array_devstring_ro', 8), ('array_devstring_rw', 8), ('scalar_devstate_ro', 19), ('scalar_devstate_rw', 19), ('array_devstate_ro', 19), ('array_devstate_rw', 19), ('scalar_devencoded_ro', 28), ('scalar_devencoded_rw', 28), ('array_devencoded_ro', 28), ('array_devencoded_rw', 28), ('scalar_devenum_ro', 29), ('scalar_devenum_rw', 29), ('array_devenum_ro', 29), ('array_devenum_rw', 29);

INSERT INTO att_history_event (event) VALUES ('add'), ('remove'), ('start'), ('stop'), ('crash'), ('pause'), ('insert_param'), ('update_ttl');
