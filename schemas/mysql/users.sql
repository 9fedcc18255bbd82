-- HDB++ users (server-global) and their grants on database hdbpp
CREATE USER IF NOT EXISTS 'hdbpprw'@'%';
CREATE USER IF NOT EXISTS 'hdbppro'@'%';
GRANT SELECT, INSERT ON `hdbpp`.* TO 'hdbpprw'@'%';
GRANT UPDATE (att_ttl) ON `hdbpp`.att_conf TO 'hdbpprw'@'%';
GRANT SELECT ON `hdbpp`.* TO 'hdbppro'@'%';
